"""A JupyterLab server on 127.0.0.1 and a headless Chromium for the browser tests; screenshots listed at the end.

JupyterLab serves a copy of notebooks/ (no token), so nothing here writes to the checkout but the
screenshots, under artifacts/browser/ (git ignores artifacts/); the session's summary lists them.
"""

import json
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
_screenshots: list[pathlib.Path] = []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_setting(settings_dir: pathlib.Path, plugin: str, values: dict) -> None:
    path = settings_dir / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


def wait_for_server(url: str, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError("JupyterLab did not start")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a copy of notebooks/; yields (base URL, the served notebooks folder); stops it after."""
    home = tmp_path_factory.mktemp("jupyterlab")
    served = home / "notebooks"
    shutil.copytree(ROOT / "notebooks", served)
    # Render every cell (no windowing), so the widgets of cells out of view are drawn as well; ask for no news.
    write_setting(home / "settings", "notebook-extension/tracker", {"windowingMode": "none"})
    write_setting(home / "settings", "apputils-extension/notification", {"fetchNews": "false"})
    port = free_port()
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               "--IdentityProvider.token=", f"--ServerApp.root_dir={served}",
               "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               f"--LabApp.user_settings_dir={home / 'settings'}", f"--LabApp.workspaces_dir={home / 'workspaces'}"]
    environment = {"JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
                   "PATH": str(pathlib.Path(sys.executable).parent) + ":/usr/bin:/bin", "HOME": str(home)}
    log = open(home / "jupyterlab.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(url, server)
        yield url, served
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium, driven by Playwright."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the `test` extra) is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium):
    """A fresh page, 1400×1000; every request it makes is recorded in `page.requested`."""
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.requested = []
    page.on("request", lambda request: page.requested.append(request.url))
    page.on("websocket", lambda websocket: page.requested.append(websocket.url))
    yield page
    # the kernels the page started would otherwise keep running beside the next tests' ones
    page.evaluate("async () => { await window.jupyterapp?.serviceManager.sessions.shutdownAll(); }")
    page.close()


@pytest.fixture
def screenshot():
    """shoot(target, name): saves a screenshot of a page or locator as artifacts/browser/<name>.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def shoot(target, name: str) -> pathlib.Path:
        path = ARTIFACTS / f"{name}.png"
        target.screenshot(path=str(path))
        _screenshots.append(path)
        return path
    return shoot


def pytest_terminal_summary(terminalreporter):
    """Lists the screenshots the browser tests took, so a reader can look at what was checked."""
    if _screenshots:
        terminalreporter.section("browser screenshots")
        for path in _screenshots:
            terminalreporter.write_line(str(path))
