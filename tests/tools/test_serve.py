"""The launcher's plain helpers (tools.serve): Caddy's config and cookie, refusals (no server)."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest

from tools import serve


def test_caddy_config_is_sticky_checked_and_closed():
    config = serve.caddy_config("127.0.0.1", 8501, ["127.0.0.1:1", "127.0.0.1:2"])
    assert config["admin"]["disabled"] is True
    server = config["apps"]["http"]["servers"]["uq"]
    assert server["listen"] == ["127.0.0.1:8501"] and server["automatic_https"]["disable"]
    static, route = server["routes"]
    assert static["match"] == [{"path": ["/static/*"]}] and static["terminal"]
    root = Path(static["handle"][1]["root"])
    assert static["handle"][1]["handler"] == "file_server" and (root / "static" / "js").is_dir()
    proxy = route["handle"][0]
    assert proxy["load_balancing"]["selection_policy"] == {"policy": "cookie", "name": "lb"}
    assert proxy["health_checks"]["active"]["uri"] == "/_stcore/health"
    assert [u["dial"] for u in proxy["upstreams"]] == ["127.0.0.1:1", "127.0.0.1:2"]
    assert serve.caddy_config("::1", 80, ["x:1"])["apps"]["http"]["servers"]["uq"]["listen"] == [
        "[::1]:80"
    ]


def test_backend_cookie_is_caddys_hmac_of_the_address():
    want = hmac.new(b"", b"127.0.0.1:8502", hashlib.sha256).hexdigest()
    assert serve.backend_cookie("127.0.0.1:8502") == want


def test_without_caddy_one_line_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setattr(serve, "CADDY", "/nonexistent/caddy")
    monkeypatch.setattr(serve.shutil, "which", lambda name: None)
    assert serve.main([]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "apt-get install -y caddy" in err


def test_a_launch_of_too_many_processes_or_a_bad_port_is_refused_in_one_line(capsys):
    for argv in (["--processes", "0"], ["--processes", "100000"], ["--port", "70000"]):
        with pytest.raises(SystemExit) as stopped:
            serve.main(argv)
        assert stopped.value.code == 2
        assert "must be" in capsys.readouterr().err
