#!/usr/bin/python3
"""interop_peer.py - a kazoo 2.x peer for zkrx's interop tests, driven by JSON lines.

  /usr/bin/python3 interop_peer.py --connect 127.0.0.1:2181 [--session-timeout-ms 4000]

Same line protocol as java/InteropPeer.java (described in packages/interop/README.md):
  stdout, first line:  {"event":"ready","impl":"kazoo","version":"2.8.0",...}
  stdin:               {"id":"a1","cmd":"acquire","recipe":"mutex","path":"/x","timeoutMs":5000}
  stdout:              {"id":"a1","ok":true,"node":"/x/<hex>__lock__0000000000"}
Recipes: mutex (Lock), read (ReadLock), write (WriteLock), semaphore (Semaphore). Lock nodes of
other implementations are seen through kazoo's extra_lock_patterns, by default "-lock-" for mutex
(Curator's and zkrx's mutex nodes), "__WRIT__" for read and "__WRIT__", "__READ__" for write; an
acquire may pass its own list as "extraLockPatterns" ([] = plain kazoo).
Only protocol lines go to stdout; kazoo's logging goes to stderr. Exits when stdin closes.
"""
import argparse
import json
import os
import sys
import threading
import time

OUT = sys.stdout
sys.stdout = sys.stderr  # only protocol lines on the real stdout
_send_lock = threading.Lock()


def send(message):
    line = json.dumps(message, separators=(",", ":"))
    with _send_lock:
        OUT.write(line + "\n")
        OUT.flush()


try:
    from kazoo.client import KazooClient
    from kazoo.exceptions import CancelledError, LockTimeout, NoNodeError
    from kazoo.version import __version__ as KAZOO_VERSION
except Exception as error:  # pragma: no cover - reported to the driver
    send({"event": "error", "message": "kazoo is not importable: %r" % (error,)})
    sys.stderr.flush()
    os._exit(2)

DEFAULT_PATTERNS = {
    "mutex": ["-lock-"],
    "read": ["__WRIT__"],
    "write": ["__WRIT__", "__READ__"],
}
RECIPES = ("mutex", "read", "write", "semaphore")

ARGS = None
sessions = {}
sessions_lock = threading.Lock()
holds = {}
holds_lock = threading.Lock()
shutting_down = False


class RequestError(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code


def reply(request_id, **fields):
    message = {"id": request_id, "ok": True}
    message.update(fields)
    send(message)


def fail(request_id, code, message):
    send({"id": request_id, "ok": False, "error": code, "message": message})


def fail_with(request_id, error):
    if isinstance(error, RequestError):
        fail(request_id, error.code, str(error))
    else:
        fail(request_id, "failed", "%s: %s" % (type(error).__name__, error))


def session(name):
    with sessions_lock:
        client = sessions.get(name)
        if client is not None:
            return client
        if shutting_down:
            raise RequestError("failed", "shutting down")
        client = KazooClient(hosts=ARGS.connect, timeout=ARGS.session_timeout_ms / 1000.0)

        def on_state(state, name=name):
            send({"event": "connection", "session": name, "state": str(state)})

        client.add_listener(on_state)
        client.start(timeout=15)
        sessions[name] = client
        return client


def close_client(client):
    try:
        client.stop()
        client.close()
    except Exception:  # noqa: BLE001 - best effort
        pass


class Hold(object):
    """One acquire: a thread that takes the lock, then waits for its release command."""

    def __init__(self, request_id, request):
        self.id = request_id
        self.recipe = request.get("recipe")
        if self.recipe not in RECIPES:
            raise RequestError("unsupported", "recipe %r is not supported by the kazoo peer" % (self.recipe,))
        self.path = path_of(request)
        self.session_name = request.get("session") or "default"
        self.timeout_ms = request.get("timeoutMs")
        self.leases = request.get("leases")
        self.identifier = request.get("participantId") or request_id
        patterns = request.get("extraLockPatterns")
        self.patterns = DEFAULT_PATTERNS.get(self.recipe, []) if patterns is None else list(patterns)
        if self.recipe == "semaphore" and not (isinstance(self.leases, int) and self.leases >= 1):
            raise RequestError("bad-request", "semaphore needs leases >= 1")
        self.recipe_object = None
        self.guard = threading.Lock()
        self.acquired = False
        self.cancel_requested = False
        self.session_closed = False
        self.releases = []
        self.release_requested = threading.Event()
        self.thread = threading.Thread(target=self.run, name="hold-" + request_id, daemon=True)

    def make(self, client):
        if self.recipe == "mutex":
            return client.Lock(self.path, self.identifier, extra_lock_patterns=self.patterns)
        if self.recipe == "read":
            return client.ReadLock(self.path, self.identifier, extra_lock_patterns=self.patterns)
        if self.recipe == "write":
            return client.WriteLock(self.path, self.identifier, extra_lock_patterns=self.patterns)
        return client.Semaphore(self.path, self.identifier, max_leases=self.leases)

    def node(self):
        if self.recipe == "semaphore":
            return self.recipe_object.create_path
        return self.path + "/" + self.recipe_object.node

    def request_release(self, request_id):
        with self.guard:
            self.releases.append(request_id)
            waiting = not self.acquired
            if waiting:
                self.cancel_requested = True
            recipe_object = self.recipe_object
        if waiting and recipe_object is not None:
            recipe_object.cancel()
        self.release_requested.set()

    def answer_releases(self):
        with self.guard:
            pending, self.releases = self.releases, []
        for request_id in pending:
            reply(request_id)

    def finish(self):
        with holds_lock:
            holds.pop(self.id, None)
        self.answer_releases()

    def run(self):
        got = False
        try:
            client = session(self.session_name)
            recipe_object = self.make(client)
            with self.guard:
                self.recipe_object = recipe_object
                cancelled = self.cancel_requested
            if not cancelled:
                timeout = None if self.timeout_ms is None else self.timeout_ms / 1000.0
                got = recipe_object.acquire(blocking=True, timeout=timeout)
        except LockTimeout:
            got = False
        except Exception as error:  # noqa: BLE001 - reported to the driver
            with self.guard:
                cancelled = self.cancel_requested
            if cancelled or isinstance(error, CancelledError):
                fail(self.id, "cancelled", "released while waiting")
            elif self.session_closed:
                fail(self.id, "session-closed", "the session was closed while waiting")
            else:
                fail_with(self.id, error)
            self.finish()
            return
        with self.guard:
            self.acquired = got
            cancelled = self.cancel_requested
        if cancelled:
            if got:
                self.release_quietly()
            fail(self.id, "cancelled", "released while waiting")
            self.finish()
            return
        if not got:
            fail(self.id, "timeout", "%s %s not acquired within %s ms" % (self.recipe, self.path, self.timeout_ms))
            self.finish()
            return
        reply(self.id, node=self.node())
        while not self.release_requested.wait(0.1):
            if self.session_closed or shutting_down:
                with holds_lock:
                    holds.pop(self.id, None)
                return
        with self.guard:
            release_id = self.releases.pop(0) if self.releases else None
        failure = None
        try:
            self.recipe_object.release()
        except Exception as error:  # noqa: BLE001
            failure = error
        # Forget the handle before answering: a `held` right after the reply must not find it.
        with holds_lock:
            holds.pop(self.id, None)
        if release_id is not None:
            if failure is None:
                reply(release_id)
            else:
                fail_with(release_id, failure)
        self.answer_releases()

    def release_quietly(self):
        try:
            self.recipe_object.release()
        except Exception:  # noqa: BLE001
            pass


def path_of(request):
    path = request.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        raise RequestError("bad-request", "path must be an absolute znode path")
    return path


def start_hold(request_id, request):
    hold = Hold(request_id, request)
    with holds_lock:
        if request_id in holds:
            raise RequestError("bad-request", "handle %s is in use" % request_id)
        holds[request_id] = hold
    hold.thread.start()


def release(request_id, request):
    handle = request.get("handle")
    with holds_lock:
        hold = holds.get(handle)
    if hold is None:
        raise RequestError("unknown-handle", "no acquire in progress or held with id %s" % (handle,))
    hold.request_release(request_id)


def held(request_id, request):
    handle = request.get("handle")
    with holds_lock:
        hold = holds.get(handle)
    if hold is None or not hold.acquired:
        raise RequestError("unknown-handle", "nothing held with id %s" % (handle,))
    reply(request_id, held=bool(hold.recipe_object.is_acquired))


def participants(request):
    recipe = request.get("recipe") or "mutex"
    if recipe not in ("mutex", "read", "write"):
        raise RequestError("unsupported", "recipe %r has no contenders here" % (recipe,))
    client = session(request.get("session") or "default")
    patterns = request.get("extraLockPatterns")
    patterns = DEFAULT_PATTERNS[recipe] if patterns is None else list(patterns)
    path = path_of(request)
    if not client.exists(path):
        return {"contenders": []}
    lock_class = {"mutex": client.Lock, "read": client.ReadLock, "write": client.WriteLock}[recipe]
    return {"contenders": lock_class(path, extra_lock_patterns=patterns).contenders()}


def session_info(request):
    client = session(request.get("session") or "default")
    session_id, password = client.client_id
    return {"sessionId": format(session_id, "x"), "password": password.hex()}


def close_session(request):
    name = request.get("session")
    with sessions_lock:
        client = sessions.pop(name, None)
    if client is None:
        raise RequestError("unknown-handle", "no open session %s" % (name,))
    with holds_lock:
        affected = [hold for hold in holds.values() if hold.session_name == name]
    for hold in affected:
        hold.session_closed = True
    close_client(client)
    return {}


def in_thread(request_id, work):
    def run():
        try:
            reply(request_id, **work())
        except Exception as error:  # noqa: BLE001
            fail_with(request_id, error)

    threading.Thread(target=run, daemon=True).start()


def dispatch(line):
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise ValueError("expected a JSON object")
    except ValueError as error:
        fail(None, "bad-request", "unparsable line: %s" % error)
        return
    request_id = request.get("id")
    command = request.get("cmd")
    try:
        if not isinstance(request_id, str):
            raise RequestError("bad-request", "every command needs a string id")
        if command == "ping":
            reply(request_id)
        elif command == "quit":
            reply(request_id)
            shutdown(0)
        elif command == "acquire":
            start_hold(request_id, request)
        elif command == "release":
            release(request_id, request)
        elif command == "held":
            held(request_id, request)
        elif command == "participants":
            in_thread(request_id, lambda: participants(request))
        elif command == "session":
            in_thread(request_id, lambda: session_info(request))
        elif command == "session-close":
            in_thread(request_id, lambda: close_session(request))
        elif command == "downgrade":
            raise RequestError("unsupported", "kazoo's ReadLock/WriteLock have no downgrade")
        elif command in ("latch-start", "latch-await", "latch-status", "latch-close"):
            raise RequestError("unsupported", "kazoo has no LeaderLatch; the kazoo peer has no latch")
        else:
            raise RequestError("unsupported", "unknown command %r" % (command,))
    except Exception as error:  # noqa: BLE001
        fail_with(request_id, error)


def shutdown(status):
    global shutting_down
    shutting_down = True
    killer = threading.Timer(5.0, lambda: os._exit(status))
    killer.daemon = True
    killer.start()
    with sessions_lock:
        clients = list(sessions.values())
        sessions.clear()
    for client in clients:
        close_client(client)
    sys.stderr.flush()
    os._exit(status)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--connect", required=True)
    parser.add_argument("--session-timeout-ms", type=int, default=4000)
    ARGS = parser.parse_args()
    try:
        session("default")
    except Exception as error:  # noqa: BLE001
        send({"event": "error", "message": "%s: %s" % (type(error).__name__, error)})
        shutdown(2)
    send({
        "event": "ready",
        "impl": "kazoo",
        "version": KAZOO_VERSION,
        "python": sys.version.split()[0],
        "pid": os.getpid(),
    })
    while True:
        line = sys.stdin.readline()
        if not line:
            break  # stdin closed: the driver is gone
        if line.strip():
            dispatch(line)
    shutdown(0)


if __name__ == "__main__":
    main()
