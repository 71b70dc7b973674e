"""The house rules of the package, read from its source (`checkeval.codegraph`, built on `ast`): no import circle, no arrow
against the layers of DEVELOPING.md, no method that picks its own judge, no module over 600 lines, no private module of
another package, no import of the package's own modules inside a function (imports at the top; only heavy optional
packages are loaded where they are used), and every exported function's annotations resolve in its module (`show_doc` and
`typing.get_type_hints` evaluate them: a name the module does not import breaks its docs page). Each rule is checked on a
small package with the faults built in first, so that a rule that cannot fail is noticed."""
import ast, importlib, inspect
from pathlib import Path

import pytest

from checkeval.tooling.codegraph import import_graph, find_cycles, imports_of, module_files

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT/'checkeval'
MAX_LINES = 600

# layer → layers it must not import (DEVELOPING.md, "The house in one screen")
FORBIDDEN = {
    'core': {'judges', 'methods'},
    'data': {'judges', 'methods'},
    'prompts': {'judges', 'methods'},
    'metaeval': {'judges'},
    'judges': {'methods'},
}

# --- exceptions while a module is being reworked: a mark names the module and why; none are open
PENDING_SIZE: dict[str, str] = {}        # module: why it is still over the limit (none today)
PENDING_GET_JUDGE: dict[str, str] = {}   # method module: why it still calls get_judge (none today)
PENDING_LOCAL_IMPORTS: dict[str, str] = {}   # module: why it still imports checkeval modules inside functions (none today)


def layer(module: str) -> str:
    "checkeval.judges.types → 'judges', checkeval.methods.seal.method → 'methods', checkeval.core → 'core'."
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else parts[0]


def layer_violations(graph) -> list[str]:
    return sorted(f'{a} → {b}' for a, targets in graph.items() for b in targets if layer(b) in FORBIDDEN.get(layer(a), ()))


def get_judge_calls(path) -> list[int]:
    "Lines where the source calls or imports `get_judge`."
    tree = ast.parse(Path(path).read_text(encoding='utf-8'))
    lines = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and (getattr(n.func, 'id', None) == 'get_judge' or getattr(n.func, 'attr', None) == 'get_judge'):
            lines.append(n.lineno)
        elif isinstance(n, ast.ImportFrom) and any(a.name == 'get_judge' for a in n.names):
            lines.append(n.lineno)
    return sorted(set(lines))


def private_imports(path, module: str) -> list[str]:
    "Imports of a private module of another package: `x._y` (or deeper) where `x` is not checkeval."
    out = []
    for r in imports_of(path, module):
        parts = r.name.split('.')
        if parts[0] == 'checkeval' or not parts[0]: continue
        if any(p.startswith('_') and not p.startswith('__') for p in parts[1:]):
            out.append(f'{module}:{r.line}: {r.name}')
    return out


def local_imports(path, module: str) -> list[str]:
    "Imports of checkeval's own modules written inside a function: `module:line: target`."
    return [f'{module}:{r.line}: {r.name}' for r in imports_of(path, module) if not r.top_level and r.name.split('.')[0] == 'checkeval']


def unresolved_annotations(module: str) -> list[str]:
    "Exported functions and methods of `module` whose annotations name something the module does not define or import."
    mod, out = importlib.import_module(module), []
    for name in getattr(mod, '__all__', []):
        obj = getattr(mod, name, None)
        fns = [obj] + ([v for v in vars(obj).values() if inspect.isfunction(v)] if inspect.isclass(obj) else [])
        for f in fns:
            if not inspect.isfunction(f) or not f.__module__.startswith('checkeval'): continue
            try: inspect.signature(f, eval_str=True)
            except NameError as e: out.append(f'{module}.{name}: {e}')
    return out


def n_lines(path) -> int:
    return len(Path(path).read_text(encoding='utf-8').splitlines())


# --- the rules, first on a package built with every fault ----------------------------------------------------------------
@pytest.fixture
def bad_pkg(tmp_path):
    files = {
        'checkeval/__init__.py': '',
        'checkeval/core.py': 'def f():\n    from checkeval.judges import types\n',            # core → judges, inside a function
        'checkeval/judges/__init__.py': 'from .types import X\n',
        'checkeval/judges/types.py': 'from ..methods import m\nX = 1\n',                     # judges → methods, relative
        'checkeval/methods/__init__.py': '',
        'checkeval/methods/m.py': 'from checkeval.judges import get_judge\nj = get_judge("x")\nfrom openai._base_client import C\n',
        'checkeval/metaeval.py': 'import checkeval.judges.types\n',
        'checkeval/runs.py': 'from . import reporting\n',
        'checkeval/reporting.py': 'from .runs import x\n' + 'x = 1\n' * (MAX_LINES + 1),
    }
    for rel, src in files.items():
        (tmp_path/rel).parent.mkdir(parents=True, exist_ok=True); (tmp_path/rel).write_text(src)
    return tmp_path/'checkeval'


def test_rules_catch_the_faults_of_a_bad_package(bad_pkg):
    g = import_graph(bad_pkg)
    assert find_cycles(g) == [['checkeval.judges', 'checkeval.judges.types', 'checkeval.methods.m'],   # through the package's __init__
                              ['checkeval.reporting', 'checkeval.runs']]
    assert layer_violations(g) == ['checkeval.core → checkeval.judges.types', 'checkeval.judges.types → checkeval.methods.m',
                                   'checkeval.metaeval → checkeval.judges.types']
    assert get_judge_calls(bad_pkg/'methods'/'m.py') == [1, 2]
    assert private_imports(bad_pkg/'methods'/'m.py', 'checkeval.methods.m') == ['checkeval.methods.m:3: openai._base_client']
    assert [m for m, p in module_files(bad_pkg).items() if n_lines(p) > MAX_LINES] == ['checkeval.reporting']
    assert local_imports(bad_pkg/'core.py', 'checkeval.core') == ['checkeval.core:2: checkeval.judges']


def test_unresolved_annotations_are_found(tmp_path, monkeypatch):
    (tmp_path/'checkeval_fault_pkg.py').write_text("from __future__ import annotations\n__all__ = ['f']\n"
                                                   "def f(xs:Iterable[str]) -> int: return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert unresolved_annotations('checkeval_fault_pkg') == ["checkeval_fault_pkg.f: name 'Iterable' is not defined"]


# --- the rules on checkeval ----------------------------------------------------------------------------------------------
GRAPH = import_graph(PKG)
FILES = module_files(PKG)


def test_the_graph_sees_the_package():
    assert {'checkeval.core', 'checkeval.runs', 'checkeval.judges', 'checkeval.methods.seal.method'} <= set(GRAPH)
    assert 'checkeval.core' in GRAPH['checkeval.runs']
    assert 'checkeval.runs' in GRAPH['checkeval.methods.seal.method']


def test_no_import_circle():
    assert find_cycles(GRAPH) == []


def test_no_arrow_against_the_layers():
    assert layer_violations(GRAPH) == []


def _marked(module, pending):
    return pytest.param(module, marks=pytest.mark.xfail(strict=False, reason=pending[module])) if module in pending else module


METHODS = sorted(m for m in FILES if m.startswith('checkeval.methods.'))


@pytest.mark.parametrize('module', [_marked(m, PENDING_GET_JUDGE) for m in METHODS])
def test_methods_never_call_get_judge(module):
    assert get_judge_calls(FILES[module]) == [], f'{module} calls get_judge: judges are handed in by the runner'


@pytest.mark.parametrize('module', [_marked(m, PENDING_SIZE) for m in sorted(FILES)])
def test_module_under_600_lines(module):
    assert n_lines(FILES[module]) <= MAX_LINES, f'{module}: {n_lines(FILES[module])} lines'


def test_no_private_module_of_another_package():
    assert [x for m, p in FILES.items() for x in private_imports(p, m)] == []


@pytest.mark.parametrize('module', [_marked(m, PENDING_LOCAL_IMPORTS) for m in sorted(FILES)])
def test_imports_at_the_top(module):
    assert local_imports(FILES[module], module) == [], 'import these at the top of the module (no circle may follow)'


@pytest.mark.parametrize('module', sorted(FILES))
def test_annotations_resolve(module):
    assert unresolved_annotations(module) == []


def test_pending_marks_name_real_modules():
    "A mark for a module that was renamed or removed would hide nothing: take it away."
    assert set(PENDING_SIZE) | set(PENDING_GET_JUDGE) | set(PENDING_LOCAL_IMPORTS) <= set(FILES)


def test_the_command_line_starts_without_its_heavy_commands():
    """`checkeval evaluate`, `data`, `settings` and `--help` do not import what only `reproduce` and `rehearse` need
    (papermill, the paper tables, the simulated judges' server: about 1.3 s per start); those commands import their
    module when they run (`checkeval.cli.command_module`)."""
    import subprocess, sys
    from checkeval.cli import HEAVY_COMMANDS
    code = 'import sys, checkeval.cli; print(sorted(m for m in sys.modules if m.startswith("checkeval.")))'
    loaded = set(eval(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout))
    heavy = set(HEAVY_COMMANDS.values()) | {'checkeval.papers', 'checkeval.gridrun', 'checkeval.testing.rehearsal'}
    assert 'checkeval.runs' in loaded and not (loaded & heavy), sorted(loaded & heavy)


# --- the layout by layer: few top-level modules, and no private name taken from another of the package's modules -----------
MAX_TOP_MODULES = 8


def top_level_modules(package_dir) -> list[str]:
    "The modules at the package's top level (its subpackages and `_modidx.py` aside)."
    return sorted(p.stem for p in Path(package_dir).glob('*.py') if p.name not in ('__init__.py', '_modidx.py'))


def private_names_imported(path, module: str) -> list[str]:
    "`module:line: target.name` for each private name (`_x`) the module takes from another checkeval module."
    return [f'{module}:{r.line}: {r.name}.{n}' for r in imports_of(path, module) if r.name.split('.')[0] == 'checkeval'
            for n in r.names if n.startswith('_') and not n.startswith('__')]


def test_layout_rules_catch_a_flat_package(tmp_path):
    pkg = tmp_path/'checkeval'
    pkg.mkdir()
    for name in ['__init__', '_modidx', *[f'm{i}' for i in range(MAX_TOP_MODULES + 1)]]: (pkg/f'{name}.py').write_text('')
    (pkg/'m0.py').write_text('from .m1 import _helper, public\nfrom checkeval.m2 import __version__\n')
    assert len(top_level_modules(pkg)) == MAX_TOP_MODULES + 1
    assert private_names_imported(pkg/'m0.py', 'checkeval.m0') == ['checkeval.m0:1: checkeval.m1._helper']


def test_few_modules_at_the_top_level():
    assert len(top_level_modules(PKG)) <= MAX_TOP_MODULES, top_level_modules(PKG)


def test_no_private_name_imported_across_modules():
    bad = [x for m, p in module_files(PKG).items() for x in private_names_imported(p, m)]
    assert not bad, bad
