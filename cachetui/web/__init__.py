"""`cachetui serve`: the app in a browser. An aiohttp server (server.py) gives each browser tab
that carries the start's token an app process of its own (session.py), through textual-serve's
protocol, on a page that holds no data (pages.py). No Textual here: the apps import it, in
their own processes."""
