"""The Tools of the window: the Compare tab and Tools > Simulate compaction (its
dialog, applying a compaction as a branch, and back). May import the compare and
compaction features, which never import each other."""
