"""The window around one session: ``main_window.MainWindow`` and the views it is built of.

``window_host.HostWindow`` is its side of ``gui.host.PanelHost``, what panels use.

The request list (``request_table``, ``request_model``), the context bar
(``bar_panel``), the breakdown tree (``breakdown_panel``, ``breakdown_model``),
the content pane (``content``, ``content_pane``), the toolbar
(``controls_toolbar``), the status bar, the actions and menus
(``window_actions``, ``context_menus``), the layout kept between runs
(``window_layout``), and ``loader``, which reads and analyses files off the GUI
thread.
"""
