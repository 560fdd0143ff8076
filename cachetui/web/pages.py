"""The pages the server sends: the app's page (a terminal, filled by the app over its
websocket), the session-limit page and the forbidden page. None holds data from a cache: the
app's text reaches the browser only as terminal output, which xterm.js paints as text.
Every value put in a page is HTML-escaped all the same, and the Content-Security-Policy lets
no script run but textual-serve's own file and the one script below."""

from __future__ import annotations

import base64
import hashlib
from html import escape

# The page's own script: "Start" and "Restart" reload the page (the query, so the token,
# kept). Attached here rather than in onclick attributes, so that the policy can allow this
# script alone by its hash, and no inline script or handler at all besides.
SCRIPT = """
window.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button.restart")) {
    button.addEventListener("click", () => {
      const params = new URLSearchParams(window.location.search);
      params.delete("delay");
      window.location.href = window.location.pathname + "?" + params.toString();
    });
  }
});
"""
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()

APP_POLICY = "; ".join(
    [
        "default-src 'none'",
        f"script-src 'self' 'sha256-{_SCRIPT_HASH}'",
        # textual.js's bundled stylesheets are <style> elements it adds.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",  # the websocket, to this same host and port
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
PLAIN_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"

# After textual-serve's templates/app_index.html (MIT, Textualize), less the font fetched from
# Google (the page asks nothing of any other host) and the inline handlers.
_APP_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{static}css/xterm.css">
<script src="{static}js/textual.js"></script>
<script>{script}</script>
<style>
@font-face {{
  font-family: "Roboto Mono";
  src: url("{static}fonts/RobotoMono-VariableFont_wght.ttf");
}}
body {{ background: #0c181f; }}
.dialog-container {{
  position: absolute; width: 100vw; height: 100vh; display: flex;
  align-items: center; justify-content: center; z-index: 10;
}}
.shade {{
  position: absolute; width: 100%; height: 100%; background: #0c181f;
  background-image: url("{static}images/background.png");
}}
.intro {{
  width: 640px; height: 240px; font-size: 16px; z-index: 20;
  font-family: "Roboto Mono", menlo, monospace; text-align: center;
  color: rgba(255, 255, 255, 0.95); background-color: #12232d;
  display: flex; flex-direction: column; align-items: center; justify-content: center;
  margin: 32px;
}}
body.-first-byte .intro-dialog {{ display: none; }}
body .textual-terminal {{ opacity: 0; transition: opacity 0.3s ease-out; }}
body.-first-byte .textual-terminal {{ opacity: 1; }}
button {{
  padding: 16px 32px; background-color: #5e0ba7; color: rgba(255, 255, 255, 0.95);
  border: none; font-family: "Roboto Mono", menlo, monospace; margin: 16px;
}}
button:hover {{ background: #ac5af4; cursor: pointer; }}
.closed-dialog {{ display: none; }}
body.-closed .closed-dialog {{ display: flex; }}
#start {{ display: none; }}
#start.-delay {{ display: block; }}
</style>
</head>
<body>
<div class="dialog-container intro-dialog">
  <div class="shade"></div>
  <div class="intro"><div>{title}</div>
    <button type="button" class="restart" id="start">Start</button></div>
</div>
<div class="dialog-container closed-dialog">
  <div class="shade"></div>
  <div class="intro"><div class="message">Session ended.</div>
    <button type="button" class="restart">Restart</button></div>
</div>
<div id="terminal" class="textual-terminal"
  data-session-websocket-url="{websocket}" data-font-size="{font_size}"></div>
</body>
</html>
"""


def app_page(*, static_url: str, websocket_url: str, font_size: int, title: str) -> str:
    return _APP_PAGE.format(
        title=escape(title),
        static=escape(static_url),
        websocket=escape(websocket_url),
        font_size=font_size,
        script=SCRIPT,
    )


_MESSAGE_PAGE = """<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ background: #0c181f; color: rgba(255, 255, 255, 0.95);
  font-family: menlo, monospace; margin: 4em; line-height: 1.5; }}
</style></head>
<body><h1>{title}</h1><p>{text}</p></body>
</html>
"""


def message_page(title: str, text: str) -> str:
    return _MESSAGE_PAGE.format(title=escape(title), text=escape(text))


def limit_page(limit: int) -> str:
    sessions = f"{limit} session{'s' if limit != 1 else ''}"
    return message_page(
        "cachetui: the session limit is reached",
        f"This server runs at most {sessions} at once (cachetui serve --sessions N), and "
        f"{sessions} {'are' if limit != 1 else 'is'} open. Close one (closing its tab ends "
        "it), then reload this page.",
    )


FORBIDDEN_TEXT = (
    "403 Forbidden: this address needs the token that `cachetui serve` printed when it "
    "started (the whole URL it printed, ?token=... included).\n"
)
