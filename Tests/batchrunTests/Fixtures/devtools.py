#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol, as a user would use a page: the tests'
browser for the live page's actions (LiveActionsTests). Only the standard library: Chromium
speaks the protocol over a pipe (--remote-debugging-pipe: commands in on fd 3, answers out on
fd 4, each message JSON ended by a NUL byte), so no WebSocket client is needed.

    devtools.py CHROMIUM STEPS_JSON

STEPS_JSON is a list of steps, run in order, each waiting (up to 60 s) for what it needs:
    {"open": URL}                      a new tab at URL, once its document has loaded
    {"type": [SELECTOR, TEXT]}         focus the field and type TEXT into it
    {"click": SELECTOR}                a real mouse click at the middle of the element
    {"submit": SELECTOR}               a click on a form's button, then until the page it leads
                                       to has loaded (not the old page, which the server's
                                       events may change to look like the new one meanwhile)
    {"submit_held": [SELECTOR, S]}     the same, the button held down S seconds before release
    {"wait": SELECTOR}                 until an element matches
    {"wait_text": [SELECTOR, TEXT]}    until an element matching SELECTOR has TEXT in its text
    {"wait_gone": SELECTOR}            until no element matches
    {"eval": EXPRESSION}               the expression's value, into the output
Prints {"results": [...]} (one value for each "eval" step, in order) and exits 0; on a step that
fails or times out, prints what it was waiting for and the page's text, and exits 1.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import shutil


class Browser:
    def __init__(self, chromium):
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="batchrun-devtools-")

        def pipes_at_3_and_4():
            # Moved high first: one of them may already sit at 3 or 4.
            high_in, high_out = os.dup(to_browser_read) + 100, os.dup(from_browser_write) + 100
            os.dup2(to_browser_read, high_in)
            os.dup2(from_browser_write, high_out)
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--user-data-dir=" + self.profile, "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=pipes_at_3_and_4, close_fds=False)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.next_id = 0
        self.buffer = b""
        self.session = None

    def close(self):
        try:
            self.command("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)

    def command(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.read()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error'].get('message')}")
                return answer.get("result", {})

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def evaluate(self, expression):
        result = self.command("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text", "exception"))
        return result.get("result", {}).get("value")

    def until(self, what, expression, timeout=60):
        """The expression's value once truthy; a page between two documents is asked again."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                value = self.evaluate(expression)
                if value:
                    return value
            except RuntimeError:
                pass
            time.sleep(0.1)
        try:
            text = self.evaluate("document.body ? document.body.innerText : document.documentElement.outerHTML")
        except RuntimeError as error:
            text = str(error)
        raise RuntimeError(f"waited 60 s for {what}; the page says:\n{text}")

    def open(self, url):
        target = self.command("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.command("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        self.command("Page.enable")
        self.command("Page.navigate", {"url": url})
        self.until(f"{url} to load", "location.href !== 'about:blank' && document.readyState === 'complete'")

    def click(self, selector, held=0):
        box = self.until(f"{selector} to click", f"""(() => {{
            const element = document.querySelector({json.dumps(selector)});
            if (!element) return null;
            element.scrollIntoView({{block: "center"}});
            const r = element.getBoundingClientRect();
            return r.width > 0 ? [r.left + r.width / 2, r.top + r.height / 2] : null;
        }})()""")
        for kind in ("mousePressed", "mouseReleased"):
            self.command("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})
            if kind == "mousePressed":
                time.sleep(held)

    def submit(self, selector, held=0):
        # A mark on the old document: the new one does not have it.
        self.evaluate("window.__devtoolsOldDocument = true")
        self.click(selector, held)
        self.until(f"the page after submitting {selector}", "!window.__devtoolsOldDocument && document.readyState === 'complete'")

    def type(self, selector, text):
        self.until(f"{selector} to type into", f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false; e.focus(); return document.activeElement === e; }})()")
        self.command("Input.insertText", {"text": text})


def main():
    chromium, steps = sys.argv[1], json.loads(sys.argv[2])
    browser = Browser(chromium)
    results = []
    try:
        for step in steps:
            (kind, argument), = step.items()
            if kind == "open":
                browser.open(argument)
            elif kind == "type":
                browser.type(*argument)
            elif kind == "click":
                browser.click(argument)
            elif kind == "submit":
                browser.submit(argument)
            elif kind == "submit_held":
                browser.submit(*argument)
            elif kind == "wait":
                browser.until(argument, f"!!document.querySelector({json.dumps(argument)})")
            elif kind == "wait_text":
                selector, text = argument
                browser.until(f"{text!r} in {selector}", f"[...document.querySelectorAll({json.dumps(selector)})].some(e => e.textContent.includes({json.dumps(text)}))")
            elif kind == "wait_gone":
                browser.until(f"{argument} gone", f"!document.querySelector({json.dumps(argument)})")
            elif kind == "eval":
                results.append(browser.evaluate(argument))
            else:
                raise RuntimeError(f"unknown step {kind}")
    except Exception as error:
        print(json.dumps({"results": results, "error": f"step {step}: {error}"}))
        return 1
    finally:
        browser.close()
    print(json.dumps({"results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
