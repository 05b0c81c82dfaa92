"""The fast test tier's guard, loaded at interpreter start when this folder is on ``PYTHONPATH``
(``make test-fast`` puts it there), so it holds in the pytest process and in every
``python -m lit3r.cli`` a test starts: ``import torch`` fails as on a machine without it, and
only loopback addresses can be resolved or connected to (the tests' own little servers run on
127.0.0.1). A test that needs either is not fast: ``tests/conftest.py`` marks it ``models`` (or
``servers``, ``llm``) from the fixtures it uses, or it carries the marker itself."""

from __future__ import annotations

import importlib.abc
import ipaddress
import socket
import sys

BLOCKED_MODULES = ("torch",)
LOCAL_NAMES = {"localhost", "", None}


class _NoTorch(importlib.abc.MetaPathFinder):
    """Refuses the top-level packages of :data:`BLOCKED_MODULES` and their submodules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLOCKED_MODULES:
            raise ModuleNotFoundError(f"No module named '{fullname}' (the fast test tier runs without torch: "
                                      "a test that needs it is marked `models`)", name=fullname)
        return None


def _is_local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _refuse(what: str, host) -> OSError:
    return OSError(f"the fast test tier has no network: {what} {host!r} refused (a test that needs a server "
                   "is marked `servers` or `llm`)")


_getaddrinfo = socket.getaddrinfo
_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _guarded_getaddrinfo(host, *args, **kwargs):
    if not _is_local(host):
        raise _refuse("name lookup of", host)
    return _getaddrinfo(host, *args, **kwargs)


def _check_address(sock: socket.socket, address) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
        raise _refuse("connection to", address[0])


def _guarded_connect(self, address):
    _check_address(self, address)
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    _check_address(self, address)
    return _connect_ex(self, address)


sys.meta_path.insert(0, _NoTorch())
socket.getaddrinfo = _guarded_getaddrinfo
socket.socket.connect = _guarded_connect          # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex    # type: ignore[method-assign]
