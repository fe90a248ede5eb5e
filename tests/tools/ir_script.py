"""Builder scripts: one kernel-IR builder call per line, run by the Python engine's builder.

The twin of rocke_c/tests/ir_driver.c, which runs the same scripts through the C builder;
tests/parity/test_ir_script_parity.py compares the two outputs byte for byte. Output of a script:

    [error: <builder failure message>\\n]   the first builder failure stops the script
    <print_ir(kernel)>                     the kernel built so far
    verify: ok | verify: <message>\\n       verify_kernel's verdict

    python3 tests/tools/ir_script.py SCRIPT...     prints each script's output

Script format. A line is one statement; blank lines
and lines starting with '#' are skipped; tokens are separated by blanks, except that a type
like `smem<f16, [4x4]>` is one token (blanks inside <...> are kept). `X = ` binds the result.

    kernel NAME [MAP]                           Builder(NAME, MAP); the first statement
    X = param NAME TYPE [MAP]
    X = constant TYPE TAGGED | const_i32 INT | const_i1 true|false | const_f32 INT | zeros TYPE
    X = add|sub|mul|div|mod|min|max|and|or|fadd|fmul|fmax|fmin A B
    X = binary OPNAME HINT A B | cmp PRED A B | select C A B | fptrunc A TYPE | bitcast A TYPE
    X = thread_id | block_id INT | lane_id | readfirstlane A
    X = make_buffer_rsrc P N | buffer_load R OFF ELEM INT | smem_alloc TYPE [exclusive]
    X = smem_load S ROW COL INT ALIGN | smem_addr S | ds_read_tr16_b64|ds_read_tr16_b128 S ROW COL
    buffer_store R OFF V | global_atomic_fadd P IDX V | smem_store S ROW COL V ALIGN
    async_buffer_load_lds R LDS OFF DWORDS AUX | s_waitcnt_vmcnt INT | sync | sync_lds_only
    X = extract V INT | insert V X INT | from_elements A... | concat A B | mma OP_ID A B C
    sched_group_barrier MASK SIZE SYNC_ID | sched_barrier MASK | s_setprio INT
    L = for_begin LB UB STEP IV [NAME:INIT...] [unroll]     binds L, L.iv, L.0, L.1, ...
    [R =] for_end L [Y...]                                  binds R.0, R.1, ...
    H = if_begin C | if_end H | ret
    push_region NAME | pop_region | X = new_value HINT TYPE | X = value NAME TYPE
    [X =] op NAME HINT|- TYPE|- [A...] [MAP] | X = value_op NAME HINT TYPE [A...] [MAP]
    t_drop PATH | t_set_attr PATH KEY TAGGED | t_del_attr PATH KEY | t_rename_entry NAME
    t_rename_region PATH J NAME | t_add_region PATH NAME | t_add_result PATH NAME TYPE
    t_drop_result PATH J | t_set_operand PATH J X | t_add_operand PATH X | t_drop_operand PATH J

TAGGED is the printer's own syntax: b:true, i:-3, f:2.5, s:"a\\"b", l:[ ... ], { k = ... }.
PATH is @i[.r.i]...: op i of @entry, then region r of that op and op i of that region, ...
`value` makes a Value no op defines (NAME with its '%'); t_* edit the kernel in place, to
reach the verifier rules a well-behaved builder never breaks.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rocke_py.engine.ir import Builder, ForLoop, Op, Region, Value  # noqa: E402
from rocke_py.engine.print_ir import print_ir  # noqa: E402
from rocke_py.engine.result import EngineFailure  # noqa: E402
from rocke_py.engine.verify import verify_kernel  # noqa: E402

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
BINARY = ("add", "sub", "mul", "div", "mod", "min", "max", "and", "or", "fadd", "fmul", "fmax", "fmin")
KEY_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


class ScriptError(Exception):
    pass


# ---- lexing: a cursor over one line ----


class Cursor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def token(self) -> Optional[str]:
        """Up to the next blank outside <...>; None at the end of the line."""
        self.skip()
        start, depth = self.pos, 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in " \t" and depth == 0:
                break
            if c == "<":
                depth += 1
            elif c == ">" and depth > 0:
                depth -= 1
            self.pos += 1
        return self.text[start : self.pos] if self.pos > start else None

    def need(self) -> str:
        tok = self.token()
        if tok is None:
            raise ScriptError("missing argument")
        return tok

    def expect(self, s: str) -> None:
        self.skip()
        if not self.text.startswith(s, self.pos):
            raise ScriptError(f"expected {s}")
        self.pos += len(s)


def parse_int(text: str) -> int:
    digits = text[1:] if text.startswith("-") else text
    if not digits or not all(c in "0123456789" for c in digits):
        raise ScriptError("bad integer")
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ScriptError("integer out of range")
    return value


FLOAT = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def parse_float(text: str) -> float:
    if text not in ("inf", "-inf", "nan", "-nan") and not FLOAT.fullmatch(text):
        raise ScriptError("bad float")
    return float(text)


def scan_word(cur: Cursor, stops: str) -> str:
    cur.skip()
    start = cur.pos
    while cur.pos < len(cur.text) and cur.text[cur.pos] not in stops:
        cur.pos += 1
    return cur.text[start : cur.pos]


def parse_string(cur: Cursor) -> str:
    cur.expect('"')
    out = []
    while True:
        if cur.pos >= len(cur.text):
            raise ScriptError("unterminated string")
        c = cur.text[cur.pos]
        cur.pos += 1
        if c == '"':
            return "".join(out)
        if c == "\\":
            e = cur.text[cur.pos : cur.pos + 1]
            cur.pos += 1
            if e not in ("\\", '"', "n", "t"):
                raise ScriptError("bad escape")
            out.append({"\\": "\\", '"': '"', "n": "\n", "t": "\t"}[e])
        else:
            out.append(c)


def open_items(cur: Cursor, opening: str, close: str) -> bool:
    """The opening bracket of a map or list: True when items follow, False when there are none
    (the closing bracket taken)."""
    cur.expect(opening)
    if cur.peek() != close:
        return True
    cur.pos += 1
    return False


def end_of_items(cur: Cursor, close: str) -> bool:
    """After an item: True at the closing bracket, False at a comma; anything else is a ScriptError."""
    c = cur.peek()
    cur.pos += 1
    if c == close:
        return True
    if c != ",":
        raise ScriptError(f"expected , or {close}")
    return False


def parse_map(cur: Cursor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not open_items(cur, "{", "}"):
        return out
    while True:
        cur.skip()
        start = cur.pos
        while cur.pos < len(cur.text) and cur.text[cur.pos] in KEY_CHARS:
            cur.pos += 1
        key = cur.text[start : cur.pos]
        if not key:
            raise ScriptError("bad key")
        cur.expect("=")
        out[key] = parse_tagged(cur)
        if end_of_items(cur, "}"):
            return out


def parse_list(cur: Cursor) -> list[Any]:
    out: list[Any] = []
    if not open_items(cur, "l:[", "]"):
        return out
    while True:
        out.append(parse_tagged(cur))
        if end_of_items(cur, "]"):
            return out


def parse_tagged(cur: Cursor) -> Any:
    cur.skip()
    rest = cur.text[cur.pos :]
    if rest.startswith("{"):
        return parse_map(cur)
    if rest.startswith("l:["):
        return parse_list(cur)
    if rest.startswith("s:"):
        cur.pos += 2
        return parse_string(cur)
    for tag in ("b:", "i:", "f:"):
        if rest.startswith(tag):
            cur.pos += 2
            word = scan_word(cur, " \t,]}")
            if tag == "b:":
                if word not in ("true", "false"):
                    raise ScriptError("bad bool")
                return word == "true"
            return parse_int(word) if tag == "i:" else parse_float(word)
    raise ScriptError("bad tagged value")


def tagged_rest(cur: Cursor) -> Any:
    value = parse_tagged(cur)
    if not cur.at_end():
        raise ScriptError("trailing text")
    return value


def map_rest(cur: Cursor) -> dict[str, Any]:
    """An optional attr map ending the line."""
    if cur.at_end():
        return {}
    if cur.peek() != "{":
        raise ScriptError("expected a map")
    value = parse_map(cur)
    if not cur.at_end():
        raise ScriptError("trailing text")
    return value


# ---- the interpreter ----


class Script:
    def __init__(self) -> None:
        self.b: Optional[Builder] = None
        self.env: dict[str, Any] = {}

    def value(self, name: str) -> Value:
        v = self.env.get(name)
        if not isinstance(v, Value):
            raise ScriptError(f"not a value: {name}")
        return v

    def values(self, cur: Cursor) -> list[Value]:
        out = []
        while not cur.at_end() and cur.peek() != "{":
            out.append(self.value(cur.need()))
        return out

    def int_arg(self, cur: Cursor) -> int:
        return parse_int(cur.need())

    def bind(self, lhs: Optional[str], value: Any) -> None:
        if lhs is not None and value is not None:
            self.env[lhs] = value

    def op_at(self, path: str) -> tuple[Region, int]:
        assert self.b is not None
        parts = path[1:].split(".") if path.startswith("@") else []
        if not parts or len(parts) % 2 == 0:
            raise ScriptError("bad path")
        idx = [parse_int(p) for p in parts]
        if any(i < 0 for i in idx):
            raise ScriptError("bad path")
        region = self.b.kernel.entry
        for depth in range(0, len(idx) - 1, 2):
            if idx[depth] >= len(region.ops) or idx[depth + 1] >= len(region.ops[idx[depth]].regions):
                raise ScriptError("bad path")
            region = region.ops[idx[depth]].regions[idx[depth + 1]]
        if idx[-1] >= len(region.ops):
            raise ScriptError("bad path")
        return region, idx[-1]

    def op(self, cur: Cursor) -> Op:
        region, i = self.op_at(cur.need())
        return region.ops[i]

    def index(self, cur: Cursor, items: list) -> int:
        j = self.int_arg(cur)
        if not 0 <= j < len(items):
            raise ScriptError("bad index")
        return j

    def tamper(self, cmd: str, cur: Cursor) -> None:
        assert self.b is not None
        if cmd == "t_drop":
            region, i = self.op_at(cur.need())
            del region.ops[i]
        elif cmd == "t_rename_entry":
            self.b.kernel.entry.name = cur.need()
        else:
            op = self.op(cur)
            if cmd == "t_set_attr":
                key = cur.need()
                op.attrs[key] = tagged_rest(cur)
            elif cmd == "t_del_attr":
                key = cur.need()
                if key not in op.attrs:
                    raise ScriptError("no such attr")
                del op.attrs[key]
            elif cmd == "t_rename_region":
                j = self.index(cur, op.regions)
                op.regions[j].name = cur.need()
            elif cmd == "t_add_region":
                op.regions.append(Region(cur.need()))
            elif cmd == "t_add_result":
                name = cur.need()
                op.results.append(Value(name, cur.need()))
            elif cmd == "t_drop_result":
                del op.results[self.index(cur, op.results)]
            elif cmd == "t_set_operand":
                j = self.index(cur, op.operands)
                op.operands[j] = self.value(cur.need())
            elif cmd == "t_add_operand":
                op.operands.append(self.value(cur.need()))
            elif cmd == "t_drop_operand":
                del op.operands[self.index(cur, op.operands)]
            else:
                raise ScriptError(f"unknown command {cmd}")

    def call(self, lhs: Optional[str], cmd: str, cur: Cursor) -> None:
        if cmd == "kernel":
            if self.b is not None:
                raise ScriptError("kernel twice")
            name = cur.need()
            self.b = Builder(name, map_rest(cur))
            return
        if self.b is None:
            raise ScriptError("the first statement must be kernel")
        b = self.b
        v = self.value
        if cmd == "param":
            name = cur.need()
            type_ = cur.need()
            self.bind(lhs, b.param(name, type_, map_rest(cur)))
        elif cmd == "constant":
            ity = cur.need()
            self.bind(lhs, b.constant(ity, tagged_rest(cur)))
        elif cmd == "const_i32":
            self.bind(lhs, b.const_i32(self.int_arg(cur)))
        elif cmd == "const_i1":
            word = cur.need()
            if word not in ("true", "false"):
                raise ScriptError("bad bool")
            self.bind(lhs, b.const_i1(word == "true"))
        elif cmd == "const_f32":
            self.bind(lhs, b.const_f32(self.int_arg(cur)))
        elif cmd == "zeros":
            self.bind(lhs, b.zeros(cur.need()))
        elif cmd in BINARY:
            x = v(cur.need())
            y = v(cur.need())
            method = {"and": "and_", "or": "or_"}.get(cmd, cmd)
            self.bind(lhs, getattr(b, method)(x, y))
        elif cmd == "binary":
            name = cur.need()
            hint = cur.need()
            x = v(cur.need())
            self.bind(lhs, b.binary(name, hint, x, v(cur.need())))
        elif cmd == "cmp":
            pred = cur.need()
            x = v(cur.need())
            self.bind(lhs, b.cmp(pred, x, v(cur.need())))
        elif cmd == "select":
            c = v(cur.need())
            x = v(cur.need())
            self.bind(lhs, b.select(c, x, v(cur.need())))
        elif cmd in ("fptrunc", "bitcast"):
            x = v(cur.need())
            self.bind(lhs, getattr(b, cmd)(x, cur.need()))
        elif cmd in ("thread_id", "lane_id", "sync", "sync_lds_only", "pop_region"):
            self.bind(lhs, getattr(b, cmd)())
        elif cmd == "block_id":
            self.bind(lhs, b.block_id(self.int_arg(cur)))
        elif cmd in ("readfirstlane", "smem_addr"):
            self.bind(lhs, getattr(b, cmd)(v(cur.need())))
        elif cmd in ("make_buffer_rsrc", "concat"):
            x = v(cur.need())
            self.bind(lhs, getattr(b, cmd)(x, v(cur.need())))
        elif cmd == "buffer_load":
            r = v(cur.need())
            off = v(cur.need())
            elem = cur.need()
            self.bind(lhs, b.buffer_load(r, off, elem, self.int_arg(cur)))
        elif cmd in ("buffer_store", "global_atomic_fadd"):
            x = v(cur.need())
            y = v(cur.need())
            getattr(b, cmd)(x, y, v(cur.need()))
        elif cmd == "smem_alloc":
            type_ = cur.need()
            flag = cur.token()
            if flag not in (None, "exclusive"):
                raise ScriptError("bad flag")
            self.bind(lhs, b.smem_alloc(type_, flag == "exclusive"))
        elif cmd == "smem_load":
            s, row, col = v(cur.need()), v(cur.need()), v(cur.need())
            n = self.int_arg(cur)
            self.bind(lhs, b.smem_load(s, row, col, n, self.int_arg(cur)))
        elif cmd == "smem_store":
            s, row, col, x = v(cur.need()), v(cur.need()), v(cur.need()), v(cur.need())
            b.smem_store(s, row, col, x, self.int_arg(cur))
        elif cmd in ("ds_read_tr16_b64", "ds_read_tr16_b128"):
            s, row, col = v(cur.need()), v(cur.need()), v(cur.need())
            self.bind(lhs, getattr(b, cmd)(s, row, col))
        elif cmd == "async_buffer_load_lds":
            r, lds, off = v(cur.need()), v(cur.need()), v(cur.need())
            dwords = self.int_arg(cur)
            b.async_buffer_load_lds(r, lds, off, dwords, self.int_arg(cur))
        elif cmd in ("s_waitcnt_vmcnt", "sched_barrier", "s_setprio"):
            getattr(b, cmd)(self.int_arg(cur))
        elif cmd == "extract":
            x = v(cur.need())
            self.bind(lhs, b.extract(x, self.int_arg(cur)))
        elif cmd == "insert":
            x = v(cur.need())
            y = v(cur.need())
            self.bind(lhs, b.insert(x, y, self.int_arg(cur)))
        elif cmd == "from_elements":
            self.bind(lhs, b.from_elements(self.values(cur)))
        elif cmd == "mma":
            op_id = cur.need()
            x, y, c = v(cur.need()), v(cur.need()), v(cur.need())
            self.bind(lhs, b.mma(op_id, x, y, c))
        elif cmd == "sched_group_barrier":
            mask = self.int_arg(cur)
            size = self.int_arg(cur)
            b.sched_group_barrier(mask, size, self.int_arg(cur))
        elif cmd == "for_begin":
            self.for_begin(lhs, cur)
        elif cmd == "for_end":
            loop = self.env.get(cur.need())
            if not isinstance(loop, ForLoop):
                raise ScriptError("not a loop")
            results = b.for_end(loop, self.values(cur))
            for i, r in enumerate(results):
                self.bind(None if lhs is None else f"{lhs}.{i}", r)
        elif cmd == "if_begin":
            self.bind(lhs, b.if_begin(v(cur.need())))
        elif cmd == "if_end":
            op = self.env.get(cur.need())
            if not isinstance(op, Op):
                raise ScriptError("not an if")
            b.if_end(op)
        elif cmd == "ret":
            b.ret()
        elif cmd == "push_region":
            b.push_region(Region(cur.need()))
        elif cmd == "new_value":
            hint = cur.need()
            self.bind(lhs, b.new_value(hint, cur.need()))
        elif cmd == "value":
            name = cur.need()
            self.bind(lhs, Value(name, cur.need()))
        elif cmd in ("op", "value_op"):
            name, hint, type_ = cur.need(), cur.need(), cur.need()
            operands = self.values(cur)
            attrs = map_rest(cur)
            if cmd == "op":
                self.bind(
                    lhs, b.op(name, operands, None if hint == "-" else hint, None if type_ == "-" else type_, attrs)
                )
            else:
                self.bind(lhs, b.value_op(name, operands, hint, type_, attrs))
        elif cmd.startswith("t_"):
            self.tamper(cmd, cur)
        else:
            raise ScriptError(f"unknown command {cmd}")
        if not cur.at_end():
            raise ScriptError("trailing arguments")

    def for_begin(self, lhs: Optional[str], cur: Cursor) -> None:
        assert self.b is not None
        lb, ub, step = self.value(cur.need()), self.value(cur.need()), self.value(cur.need())
        iv = cur.need()
        carried: list[tuple[str, Value]] = []
        unroll = False
        while not cur.at_end():
            tok = cur.need()
            if tok == "unroll":
                unroll = True
            elif ":" in tok:
                name, _, init = tok.partition(":")
                carried.append((name, self.value(init)))
            else:
                raise ScriptError("bad carried value")
        loop = self.b.for_begin(lb, ub, step, iv, carried, unroll)
        if lhs is not None:
            self.env[lhs] = loop
            self.env[f"{lhs}.iv"] = loop.iv
            for i, arg in enumerate(loop.args):
                self.env[f"{lhs}.{i}"] = arg


def statement(line: str) -> tuple[Optional[str], str, Cursor]:
    cur = Cursor(line)
    first = cur.need()
    save = cur.pos
    if cur.token() == "=":
        return first, cur.need(), cur
    cur.pos = save
    return None, first, cur


def build_script(text: str) -> tuple[Script, str]:
    """The script's builder and "" or the builder failure line (ScriptError when malformed).
    Shared with ll_script.py (the C twin: ir_driver.c's build_script)."""
    script = Script()
    head = ""
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip(" \t\r")
        if not line or line.startswith("#"):
            continue
        try:
            lhs, cmd, cur = statement(line)
            script.call(lhs, cmd, cur)
        except ScriptError as e:
            raise ScriptError(f"line {number}: {e}") from None
        except EngineFailure as e:
            head = f"error: {e}\n"
            break
    if script.b is None:
        raise ScriptError("no kernel statement")
    return script, head


def run(text: str) -> str:
    """The output of one script (a ScriptError for a malformed script)."""
    script, head = build_script(text)
    assert script.b is not None
    bad = verify_kernel(script.b.kernel)
    return head + print_ir(script.b.kernel) + f"verify: {bad or 'ok'}\n"


def run_scripts(paths: list[str], run_one: Callable[[str], str]) -> int:
    """Each script's output by run_one on stdout; 1 when a script was malformed. Shared with
    ll_script.py (the C twin: ir_driver.c's run_scripts)."""
    status = 0
    for path in paths:
        try:
            sys.stdout.write(run_one(Path(path).read_bytes().decode("utf-8")))  # no newline translation
        except ScriptError as e:
            sys.stdout.write(f"script error: {e}\n")
            status = 1
    return status


def main(argv: list[str]) -> int:
    return run_scripts(argv, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
