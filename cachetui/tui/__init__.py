"""The Textual app: app.py, keys.py (bindings by id), messages.py (messages up), palette.py
(the command palette's providers: they post messages, never import screens), screens/ and
widgets/ (widgets never import screens). Nothing outside this package imports Textual."""
