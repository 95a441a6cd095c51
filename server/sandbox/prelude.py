# The sandbox prelude: runs once in every interpreter before user code. It defines the built-ins the RLM
# runtime offers (llm_query, rlm_query, SUBMIT, host tools) as calls through the host pipe, and the step
# runner that captures stdout/stderr, prints the value of a trailing expression and formats tracebacks.
#
# It runs before the interpreters' memory snapshot is taken (server/sandbox/snapshot.ts), so it holds no
# reference to a JavaScript object: the host module is imported at the first call, after the worker
# registered it in this process.
import ast as _ast
import io as _io
import json as _json
import sys as _sys
import time as _time
import traceback as _traceback


class _Submitted(BaseException):
    pass


_state = {"submitted": None, "did_submit": False, "limit": 65536}
_user = {"__name__": "__main__"}


def _host_call(name, *args):
    import _atrium_host

    # What the step printed so far shows before it waits on the host.
    for stream in _state.get("streams", ()):
        stream.flush()
    reply = _json.loads(_atrium_host.call(name, _json.dumps(list(args), default=str)))
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return reply.get("result")


def SUBMIT(*args, **kwargs):
    """Finish the turn with an answer: SUBMIT("text") or SUBMIT(answer=..., other=...)."""
    if args and kwargs:
        raise TypeError("SUBMIT takes either one positional answer or keyword fields")
    if len(args) > 1:
        raise TypeError("SUBMIT takes one positional answer")
    _state["submitted"] = args[0] if args else kwargs
    _state["did_submit"] = True
    raise _Submitted()


def _make_tool(name, doc):
    def tool(*args):
        return _host_call(name, *args)

    tool.__name__ = name
    tool.__doc__ = doc
    return tool


_DOCS = {
    "llm_query": "llm_query(prompt) -> str: ask the language model one question",
    "llm_query_batched": "llm_query_batched(prompts) -> list[str]: ask several questions at once",
    "rlm_query": "rlm_query(prompt, label=None) -> str: run a child RLM with a fresh interpreter",
    "rlm_query_batched": "rlm_query_batched(prompts) -> list[str]: run child RLMs in parallel",
    "list_files": "list_files(path='') -> list[dict]: the workspace files",
    "read_file": "read_file(path) -> str: a workspace file's text",
    "write_file": "write_file(path, text) -> dict: create or overwrite a workspace file",
    "load_skill": "load_skill(skill_id) -> str: a skill's instructions",
    "create_artifact": "create_artifact(title, content, media_type='text/markdown', kind='document') -> dict",
    "propose_memory": "propose_memory(category, text) -> dict: propose a memory for after the turn",
}


def _fresh():
    """In an interpreter started from the snapshot: what the snapshot froze that must differ each time."""
    # `random` is imported while pyodide starts, so its seed is in the snapshot: every interpreter would
    # draw the same numbers. A new seed from the OS (os.urandom), as a fresh import would take.
    random = _sys.modules.get("random")
    if random is not None:
        random.seed()


def _init(tools_json, vars_json, limit):
    _state["limit"] = int(limit)
    for name in _json.loads(tools_json):
        _user[name] = _make_tool(name, _DOCS.get(name, name))
    _user.update(_json.loads(vars_json))
    _user["SUBMIT"] = SUBMIT


# Printed text is sent to the host while a step runs (the UI shows it live) once this much is pending,
# or at a write this long after the last send, or at flush() (print(..., flush=True), a host call).
_STREAM_CHARS = 4096
_STREAM_SECONDS = 0.1


class _Bounded(_io.TextIOBase):
    """A text stream that keeps at most `limit + 1` characters: a print loop cannot fill memory.

    With a `stream` name, what it keeps is also sent to the host as it comes (`output` messages); the
    step's result still carries the whole text.
    """

    def __init__(self, limit, stream=None):
        self._parts, self._size, self._limit = [], 0, limit
        self._stream, self._pending, self._pending_size, self._sent_at = stream, [], 0, 0.0

    def writable(self):
        return True

    def write(self, text):
        room = self._limit + 1 - self._size
        if room > 0:
            kept = text[:room]
            self._parts.append(kept)
            self._size += len(kept)
            if self._stream is not None and kept:
                self._pending.append(kept)
                self._pending_size += len(kept)
                if self._pending_size >= _STREAM_CHARS or _time.monotonic() - self._sent_at >= _STREAM_SECONDS:
                    self.flush()
        return len(text)

    def flush(self):
        if self._stream is None or not self._pending:
            return
        import _atrium_host

        text, self._pending, self._pending_size = "".join(self._pending), [], 0
        self._sent_at = _time.monotonic()
        _atrium_host.output(self._stream, text)

    def getvalue(self):
        return "".join(self._parts)


def _run(code):
    out, err = _Bounded(_state["limit"], "stdout"), _Bounded(_state["limit"], "stderr")
    _state["streams"] = (out, err)
    _state["submitted"], _state["did_submit"] = None, False
    error = None
    saved = _sys.stdout, _sys.stderr
    _sys.stdout, _sys.stderr = out, err
    try:
        tree = _ast.parse(code, "<step>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], _ast.Expr):
            last = _ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<step>", "exec"), _user)
        if last is not None:
            value = eval(compile(last, "<step>", "eval"), _user)
            if value is not None:
                print(repr(value))
    except _Submitted:
        pass
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        error = "".join(_traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next))
    finally:
        _sys.stdout, _sys.stderr = saved
        _state["streams"] = ()
    stdout, stderr, limit = out.getvalue(), err.getvalue(), _state["limit"]
    truncated = len(stdout) > limit or len(stderr) > limit
    try:
        submitted = _json.loads(_json.dumps(_state["submitted"], default=str))
    except ValueError:
        submitted = str(_state["submitted"])
    return _json.dumps(
        {
            "stdout": stdout[:limit] + ("\n[output truncated]" if len(stdout) > limit else ""),
            "stderr": stderr[:limit] + ("\n[output truncated]" if len(stderr) > limit else ""),
            "error": error[-limit:] if error else None,
            "submitted": submitted,
            "didSubmit": _state["did_submit"],
            "truncated": truncated,
        }
    )
