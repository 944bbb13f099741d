"""The layout docs/architecture.md describes is the layout of the code: a static pass over every import.

Every module's imports are read from its source (top level and inside functions alike, since a lazy import is
still a dependency), resolved to the quadsel modules they load, and checked for: no import cycle between modules,
`click` only in quadsel/cli, and every package importing only the packages the doc's table allows.
"""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "quadsel")
DOC = os.path.join(ROOT, "docs", "architecture.md")


def _modules():
    """{dotted module name: path} of every module of quadsel."""
    out = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                out[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return out


MODULES = _modules()


def _imports(module):
    """[(imported name, line)] of one module: quadsel modules resolved to the module actually loaded (`from . import
    x` loads the submodule x; `from .m import f` loads m), anything else as its top-level name."""
    path = MODULES[module]
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                source = base + ("." + node.module if node.module else "")
            else:
                source = node.module
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                out.append((sub if sub in MODULES else source, node.lineno))
    return out


def _graph():
    return {m: {name for name, _ in _imports(m) if name in MODULES and name != m} for m in MODULES}


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan), and modules importing themselves."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _package(module):
    """The package of a module: `quadsel.measure.runner` -> measure; a module at the top -> its own name."""
    parts = module.split(".")
    if len(parts) == 1:
        return "quadsel"
    if os.path.isdir(os.path.join(PACKAGE, parts[1])):
        return parts[1]
    return parts[1] + ".py"


def _doc_table():
    """{package: set of packages it may import} from docs/architecture.md's table `| package | may import |`."""
    text = open(DOC, encoding="utf-8").read()
    text = text.split("## Which package may import which", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+/?)` \|([^|]*)\|", text, flags=re.M)
    table = {}
    for name, allowed in rows:
        table[name.rstrip("/")] = {a.rstrip("/") for a in re.findall(r"`([\w.]+/?)`", allowed)}
    return table


def test_the_static_pass_sees_lazy_and_relative_imports():
    # a function-level import is a dependency too; `from . import x` is the submodule x, not the package
    assert "quadsel.sampling.adaptive_run" in _graph()["quadsel.cli.measure"]
    assert "quadsel.ingest" not in _graph()["quadsel.ingest.csvfile"]
    assert "quadsel.ingest.columns" in _graph()["quadsel.ingest.csvfile"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_quadsel_import_names_a_module_that_exists():
    # a lazy import of a moved module fails only when its command runs: the static pass finds it first
    broken = sorted(f"{m} (line {line}): {name}" for m in MODULES for name, line in _imports(m)
                    if name.split(".")[0] == "quadsel" and name not in MODULES)
    assert broken == []


def test_no_import_cycle_between_modules():
    assert _cycles(_graph()) == []


def test_click_is_imported_only_in_cli():
    outside = sorted(f"{m} (line {line})" for m in MODULES for name, line in _imports(m)
                     if name.split(".")[0] == "click" and _package(m) != "cli")
    assert outside == []


def test_mpi4py_is_never_imported_at_module_level():
    # heavy imports are lazy: `quadsel --help` and every command that does not talk to MPI start without it
    top = []
    for m, path in MODULES.items():
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            top += [f"{m}: {n}" for n in names if n.split(".")[0] in ("mpi4py", "matplotlib", "sklearn")]
    assert top == []


def test_every_package_imports_only_what_the_doc_allows():
    table = _doc_table()
    packages = {_package(m) for m in MODULES}
    documented = set(table)
    assert packages - documented == set(), "packages the doc's table does not list"
    assert documented - packages == set(), "packages the doc lists that do not exist"
    wrong = []
    for m, deps in _graph().items():
        own = _package(m)
        for d in deps:
            other = _package(d)
            if other != own and other not in table[own]:
                wrong.append(f"{m} imports {d} ({own} may import: {', '.join(sorted(table[own])) or 'nothing'})")
    assert wrong == []


def _paragraphs():
    """{package: its paragraph} of the doc's "The stages" (a paragraph opens with **package/**)."""
    text = open(DOC, encoding="utf-8").read()
    return dict(re.findall(r"^\*\*(\w+)/\*\*(.*?)(?=^\*\*|^## )", text, flags=re.M | re.S))


@pytest.mark.parametrize("folder", sorted(p for p in os.listdir(PACKAGE) if os.path.isdir(os.path.join(PACKAGE, p))
                                          and not p.startswith("__")))
def test_every_module_of_a_package_is_named_in_its_paragraph(folder):
    paragraph = _paragraphs().get(folder)
    assert paragraph is not None, f"docs/architecture.md has no paragraph for {folder}/"
    named = set(re.findall(r"`([\w/]+\.py)", paragraph))
    modules = {f for f in os.listdir(os.path.join(PACKAGE, folder)) if f.endswith(".py") and f != "__init__.py"}
    assert sorted(modules - named) == [], f"modules of {folder}/ the doc does not name"
    gone = [n for n in named if not os.path.exists(os.path.join(PACKAGE, folder, n) if "/" not in n else
                                                   os.path.join(PACKAGE, n) if not n.startswith("tests/") else
                                                   os.path.join(ROOT, n))]
    assert gone == [], f"modules the doc names in {folder}/ that do not exist"


def test_the_command_line_loads_without_numpy():
    # `quadsel --version` (and every command's start, and Ctrl-C's window before it) stays light (architecture.md)
    import subprocess
    import sys
    code = "import sys, quadsel.cli; print(sorted(m for m in ('numpy', 'scipy', 'matplotlib', 'mpi4py') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


# Issue 38: each MPI library's facts are its class's (libraries/); the other packages ask the class, never its name.
_LIBRARY = r"(?:openmpi|mpich|intelmpi)"
_NAMED = rf"(?:[\"']{_LIBRARY}[\"']|\b{_LIBRARY}\.NAME\b)"
NAME_SWITCH = re.compile("|".join([
    rf"(?:==|!=|\bis(?: not)?)\s*{_NAMED}",               # library == "openmpi", flavor != mpich.NAME
    rf"[\"']{_LIBRARY}[\"']\s*(?:==|!=)",                  # "mpich" == library
    rf"\bin\s*[(\[{{][^)\]}}]*{_NAMED}",                   # in ("openmpi", "unknown"), not in (None, "openmpi")
    rf"\bis(?: not)?\s+{_LIBRARY}\b",                      # module is mpich
    rf"[{{,]\s*[\"']{_LIBRARY}[\"']\s*:",                  # {"openmpi": ...}: a switch keyed by a name
    rf"[(\[{{]\s*[\"']{_LIBRARY}[\"']\s*,",                # ("openmpi", "mpich"): a list of the names
]))
NAME_SWITCH_LIMIT = 10     # the bound of issue 38; 0 when this test was written


def test_no_package_outside_libraries_switches_on_a_library_name():
    found = [f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}" for m, path in sorted(MODULES.items())
             if _package(m) != "libraries"
             for number, line in enumerate(open(path, encoding="utf-8"), start=1) if NAME_SWITCH.search(line)]
    assert len(found) <= NAME_SWITCH_LIMIT, "ask the library's class (libraries.get(name)):\n" + "\n".join(found)


def test_the_name_switch_count_sees_every_form():
    lines = ['if library == "openmpi":', "if flavor != mpich.NAME:", 'if flavor in ("openmpi", "unknown"):',
             'if library not in (None, "openmpi"):', "if module is mpich:", 'X = {"intelmpi": 3}',
             'FLAVORS = ("openmpi", "mpich")', 'if "mpich" == library:']
    assert all(NAME_SWITCH.search(line) for line in lines)
    assert not any(NAME_SWITCH.search(line) for line in ['get("openmpi").title', 'library = "openmpi"',
                                                          "if lib.probe == \"sends\":"])


def _names_imported(module, source_prefix):
    """{(source module, name)} that `module` imports from modules starting with `source_prefix`."""
    path = MODULES[module]
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                source = ".".join(parts[:len(parts) - node.level + 1]) + ("." + node.module if node.module else "")
            else:
                source = node.module
            if source and source.startswith(source_prefix):
                out |= {(source, alias.name) for alias in node.names}
    return out


def test_the_claims_of_the_doc_on_who_reads_whom_hold():
    """docs/architecture.md: `measure/` reads `decision/` for the label of a method only; `trace/` reads
    `evaluate/` for the figure helpers only; no stage imports the test bed; tune drives no quadsel command line."""
    text = open(DOC, encoding="utf-8").read()
    assert "`measure/` reads `decision/` for one thing only, the label of a method (`decision_map.method_label`)" in text
    measure_reads = set().union(*(_names_imported(m, "quadsel.decision") for m in MODULES if _package(m) == "measure"))
    assert measure_reads <= {("quadsel.decision.decision_map", "method_label")}, measure_reads
    assert "`trace/` reads `evaluate/` for the figure helpers (`figure_maps.pyplot`, `save`)" in text
    trace_reads = set().union(*(_names_imported(m, "quadsel.evaluate") for m in MODULES if _package(m) == "trace"))
    assert trace_reads <= {("quadsel.evaluate.figure_maps", "pyplot"), ("quadsel.evaluate.figure_maps", "save")}
    assert "no stage imports" in _paragraphs()["testbed"]
    users = {m for m, deps in _graph().items() for d in deps if _package(d) == "testbed" and _package(m) != "testbed"}
    assert users == set(), users
    tune_text = "".join(open(MODULES[m], encoding="utf-8").read() for m in MODULES if _package(m) == "tune")
    assert "python_module(" not in tune_text and '"measure", "--np"' not in tune_text    # issue 38: no argv
