"The library builds as a normal wheel and imports outside the repository."
import json, subprocess, sys, zipfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp('wheel')
    r = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-q', '-w', str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    wheels = list(out.glob('checkeval-*.whl'))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for mod in ('checkeval/__init__.py', 'checkeval/core.py', 'checkeval/runs.py', 'checkeval/cli.py', 'checkeval/_modidx.py'):
        assert mod in names
    # every prompt template of the source tree ships as package data
    for t in (ROOT / 'checkeval' / 'prompts').rglob('*.yaml'):
        assert t.relative_to(ROOT).as_posix() in names, t
    # the console script is declared
    meta = [n for n in names if n.endswith('entry_points.txt')]
    assert meta and 'checkeval = checkeval.cli:main' in zipfile.ZipFile(wheel).read(meta[0]).decode()


def test_import_outside_repo(wheel, tmp_path):
    target = tmp_path / 'site'
    r = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--target', str(target), str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    code = ("import checkeval, checkeval.core as c; "
            "print(checkeval.__file__); "
            "it = c.Item(benchmark='b', item_id='1', group_id='g', system_id='s', output='o'); print(it.to_json())")
    env = {'PYTHONPATH': str(target), 'PATH': '/usr/bin:/bin', 'HOME': str(tmp_path)}
    r = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(str(target)), f'imported from {first}, not from the installed wheel'
    assert json.loads(r.stdout.splitlines()[1])['item_id'] == '1'
