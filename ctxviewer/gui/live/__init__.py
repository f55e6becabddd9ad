"""Live sessions: follow a growing log, attach to an agent's session, the recording proxy.

``panel.LivePanel`` adds the actions, menus and status indicators; ``follow``
polls the file, ``attach_dialog`` lists the agents' sessions, ``proxy_control``
and ``proxy_dialog`` start the proxy, ``compact_dialog`` compacts a conversation
going through it.
"""
