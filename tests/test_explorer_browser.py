"""The explorer as a user meets it: ``make explorer``'s Voilà page driven in Debian's Chromium through Playwright.

Voilà serves explorer/explorer.ipynb on a free port of 127.0.0.1 (a subprocess, killed with its kernel at teardown);
every request leaving 127.0.0.1 is refused, so the page is checked offline. Never skipped: ``make test`` installs
Chromium first.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from helpers import ConfigError, count_model, load_config, parse_config
from helpers.config import raw_config
from helpers.explorer import edited, uploaded

from .conftest import ROOT

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")  # as the Makefile names it
NOTEBOOK = ROOT / "explorer" / "explorer.ipynb"
WAIT_MS = 45_000  # the first page: Voilà starts a kernel, which imports helpers and matplotlib (slow under load)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "JUPYTER_RUNTIME_DIR": str(tmp_path_factory.mktemp("jupyter_runtime"))}
    log = (tmp_path_factory.mktemp("voila") / "voila.log").open("w")
    voila = subprocess.Popen(
        [sys.executable, "-m", "voila", str(NOTEBOOK), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
         # its kernels talk over IPC files, not TCP ports: no race for a free port with the notebooks' kernels that
         # nbval starts beside it under `pytest -n 2` (a kernel that loses it dies before replying)
         "--KernelManager.transport=ipc"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not answers(port):
            assert voila.poll() is None, Path(log.name).read_text()
            assert time.monotonic() < deadline, "Voilà did not answer in 30 s"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(voila.pid, signal.SIGTERM)  # Voilà and the kernels it started (its own process group)
        try:
            voila.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(voila.pid, signal.SIGKILL)
            voila.wait()
        log.close()


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            # offline: only the Voilà server answers (the page's web fonts from a CDN are refused)
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server)
                       else route.abort())
            page.goto(server, timeout=WAIT_MS)
            yield page
        finally:
            browser.close()


def total(raw: dict) -> str:
    return f"{count_model(parse_config(raw)).total:,}"


def test_pick_a_preset_change_a_field_type_an_invalid_value(page: Page) -> None:
    expect(page.locator(".explore-total")).to_have_text(f"{count_model(load_config('bert-base-uncased')).total:,}",
                                                        timeout=WAIT_MS)
    # a preset
    page.locator(".explore-preset select").select_option("llama-7b")
    expect(page.locator(".explore-total")).to_have_text(total(raw_config("llama-7b")), timeout=WAIT_MS)
    # a field: two layers
    layers = page.locator(".explore-knob-L input")
    layers.fill("2")
    layers.press("Enter")
    expect(page.locator(".explore-total")).to_have_text(total(edited(raw_config("llama-7b"), {"L": 2})),
                                                        timeout=WAIT_MS)
    # an invalid value: 7 heads do not split 4096: the engine's one line, no traceback
    with pytest.raises(ConfigError) as error:
        parse_config(edited(raw_config("llama-7b"), {"A": 7}))
    heads = page.locator(".explore-knob-A input")
    heads.fill("7")
    heads.press("Enter")
    expect(page.locator(".explore-error")).to_have_text(str(error.value), timeout=WAIT_MS)
    assert "Traceback" not in page.inner_text("body")
    # back to a valid value: the error goes, the total is the engine's
    heads.fill("32")
    heads.press("Enter")
    expect(page.locator(".explore-error")).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator(".explore-total")).to_have_text(total(edited(raw_config("llama-7b"), {"L": 2})),
                                                        timeout=WAIT_MS)


def test_compare_two_presets(page: Page) -> None:
    page.locator(".lm-TabBar-tab", has_text="compare").click()
    page.locator(".explore-right select").select_option("llama-7b")
    total_row = page.locator(".explore-compare tr", has_text="total")
    expect(total_row).to_contain_text(f"{count_model(load_config('llama-7b')).total:,}", timeout=WAIT_MS)
    expect(total_row).to_contain_text(f"{count_model(load_config('bert-base-uncased')).total:,}")
    expect(total_row).to_have_class("explore-differs")


def test_upload_a_config(page: Page) -> None:
    """A config.json through the page's file chooser: a valid one becomes the model shown, a broken one says why."""
    page.locator(".lm-TabBar-tab", has_text="explore").click()
    expect(page.locator(".explore-total")).to_have_count(1, timeout=WAIT_MS)
    raw = {**raw_config("qwen3-8b"), "num_hidden_layers": 5, "hidden_size": 1024, "num_attention_heads": 8}

    def send(name: str, content: bytes) -> None:
        with page.expect_file_chooser(timeout=WAIT_MS) as chooser:
            page.locator(".explore-upload").click()
        chooser.value.set_files({"name": name, "mimeType": "application/json", "buffer": content})

    send("tiny-qwen3.json", json.dumps(raw).encode())
    expect(page.locator(".explore-preset select")).to_have_value("uploaded: tiny-qwen3.json", timeout=WAIT_MS)
    expect(page.locator(".explore-total")).to_have_text(total(raw), timeout=WAIT_MS)
    expect(page.locator(".explore-knob-L input")).to_have_value("5", timeout=WAIT_MS)
    # broken JSON: the one line naming the file, no traceback; the uploaded model stays
    with pytest.raises(ConfigError) as error:
        uploaded(b'{"model_type": "qwen3",', "broken.json")
    send("broken.json", b'{"model_type": "qwen3",')
    expect(page.locator(".explore-error")).to_have_text(str(error.value), timeout=WAIT_MS)
    assert "Traceback" not in page.inner_text("body")
    expect(page.locator(".explore-total")).to_have_text(total(raw))
