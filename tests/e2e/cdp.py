# SPDX-License-Identifier: MIT
"""Debian's headless Chromium driven through the DevTools protocol over a pipe
(--remote-debugging-pipe: no port, no npm, no browser download): a page opened, its
console errors, exceptions and network requests recorded, script evaluated, real mouse
clicks and typing, screenshots."""

import base64
import fcntl
import json
import os
import select
import subprocess
import time

from heapkit_e2e import chromium_browser, workdir


class Browser:
    """One headless Chromium with one page. Use as a context manager: the browser (this
    process's child) is ended by its PID on exit."""

    def __init__(self, width=1280, height=900):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def pipes():  # in the child: fd 3 reads our commands, fd 4 writes its answers
            commands = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            answers = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self._proc = subprocess.Popen(
            [chromium_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--hide-scrollbars", "--remote-debugging-pipe", f"--user-data-dir={workdir()}",
             f"--window-size={width},{height}", "about:blank"],
            preexec_fn=pipes, pass_fds=(3, 4),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        self.session = None
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.send("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=False)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._proc.kill()
        self._proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed its pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, *, session=True, timeout=30):
        """Sends a command and returns its result; events met meanwhile are kept."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def wait_for(self, method, timeout=30):
        """Waits for an event (returns it), looking first at those already kept."""
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event["method"] == method:
                self.events.remove(event)
                return event
        while True:
            answer = self._read_message(deadline)
            if answer.get("method") == method:
                return answer
            if "method" in answer:
                self.events.append(answer)

    def open(self, url):
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (JSON-able), or raises."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector):
        """A real mouse click in the middle of the first element `selector` finds."""
        self._mouse(selector, ("mouseMoved", "mousePressed", "mouseReleased"))

    def hover(self, selector):
        """The mouse moved over the middle of the first element `selector` finds."""
        self._mouse(selector, ("mouseMoved",))

    def _mouse(self, selector, kinds):
        box = self.evaluate(
            f"(function(){{var e=document.querySelector({json.dumps(selector)});"
            "if(!e)return null;e.scrollIntoView({block:'center'});"
            "var r=e.getBoundingClientRect();return [r.left+r.width/2,r.top+r.height/2];})()")
        if box is None:
            raise RuntimeError(f"nothing matches {selector}")
        for kind in kinds:
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def type_into(self, selector, text):
        """Focuses `selector`, clears it, and types `text` as a person would."""
        self.evaluate(f"(function(){{var e=document.querySelector({json.dumps(selector)});"
                      "e.focus();e.select&&e.select();})()")
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Backspace",
                                             "windowsVirtualKeyCode": 8})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Backspace",
                                             "windowsVirtualKeyCode": 8})
        if text:
            self.send("Input.insertText", {"text": text})

    def screenshot(self, path):
        shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        return path

    def drain(self):
        """Reads the events still in the pipe (console lines, requests) without blocking."""
        while True:
            ready, _, _ = select.select([self._from_browser], [], [], 0.2)
            if not ready and b"\0" not in self._buffer:
                return
            self.events.append(self._read_message(time.monotonic() + 5))

    def errors(self):
        """Console errors, uncaught exceptions and error log entries seen so far."""
        self.drain()
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif event["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error",
                                                                                     "assert"):
                found.append(json.dumps(params["args"])[:500])
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"]["text"])
        return found

    def requests(self):
        """The URLs the page asked for."""
        self.drain()
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]
