"""View's tab actions, View > Theme and the Help menu (keyboard shortcuts, About),
installed last of the panels. Imports no feature."""
