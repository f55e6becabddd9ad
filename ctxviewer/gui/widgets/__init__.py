"""Shared widgets and helpers of every part of the window (they import no feature package).

Colours (``palette``), cheap plot repaints (``plot_paint``), menus found by
title (``menus``), the standard dialogs and the file dialog (``dialogs``,
``file_dialog``), item-view sizing (``row_views``), the stacked context bar
(``context_bar``), background jobs (``jobs.LatestJob`` over ``worker``) and the
GUI-thread-only cyclic GC (``gc_guard``).
"""
