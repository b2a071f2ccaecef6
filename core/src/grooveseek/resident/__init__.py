"""The resident path: a running ``groove serve`` answers one-shot CLI commands over a Unix socket.

``sock`` owns the socket file and the wire format, ``client`` the CLI side, ``server`` the side
that runs inside ``groove serve``. See docs/cli.md ("Resident answers").
"""
