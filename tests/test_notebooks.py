"Notebook hygiene: papermill's parameters tag survives nbdev-clean; committed notebooks carry no outputs."
import copy, json, re
from pathlib import Path
import pytest
from nbdev.clean import clean_nb

ROOT = Path(__file__).resolve().parents[1]
NBS = sorted((ROOT / 'nbs').rglob('*.ipynb'))
EXPERIMENTS = sorted((ROOT / 'nbs' / 'experiments').glob('*.ipynb'))


def _params_cells(nb):
    return [c for c in nb['cells'] if 'parameters' in c.get('metadata', {}).get('tags', [])]


@pytest.mark.parametrize('path', EXPERIMENTS, ids=lambda p: p.name)
def test_experiment_has_one_parameters_cell_that_cleaning_keeps(path):
    nb = json.loads(path.read_text())
    assert len(_params_cells(nb)) == 1, 'an experiment notebook needs exactly one cell tagged parameters'
    cleaned = copy.deepcopy(nb)
    import tomllib
    nbcfg = tomllib.loads((ROOT / 'pyproject.toml').read_text())['tool']['nbdev']
    clean_nb(cleaned, clear_all=nbcfg.get('clear_all', False),
             allowed_cell_metadata_keys=nbcfg.get('allowed_cell_metadata_keys'))
    assert len(_params_cells(cleaned)) == 1, 'nbdev-clean with the project settings drops the parameters tag'


def test_settings_keep_tags():
    import tomllib
    nbcfg = tomllib.loads((ROOT / 'pyproject.toml').read_text())['tool']['nbdev']
    assert 'tags' in nbcfg.get('allowed_cell_metadata_keys', [])
    assert not nbcfg.get('clear_all', False), 'clear_all strips every cell metadata key, the parameters tag included'


@pytest.mark.parametrize('path', NBS, ids=lambda p: str(p.relative_to(ROOT / 'nbs')))
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    with_out = [i for i, c in enumerate(nb['cells']) if c.get('outputs')]
    assert not with_out, f'{path.name}: cells {with_out[:5]} have outputs; commit notebooks without outputs'


RUN_NBS = EXPERIMENTS + sorted((ROOT / 'nbs' / 'paper').glob('*.ipynb'))


@pytest.mark.parametrize('path', RUN_NBS, ids=lambda p: str(p.relative_to(ROOT / 'nbs')))
def test_run_notebook_names_its_kernel_and_cleaning_keeps_it(path):
    "papermill needs a language (\"No language found in notebook\" otherwise): the kernelspec must survive nbdev-clean."
    import tomllib
    nb = json.loads(path.read_text())
    cleaned = copy.deepcopy(nb)
    nbcfg = tomllib.loads((ROOT / 'pyproject.toml').read_text())['tool']['nbdev']
    clean_nb(cleaned, clear_all=nbcfg.get('clear_all', False), allowed_metadata_keys=nbcfg.get('allowed_metadata_keys'),
             allowed_cell_metadata_keys=nbcfg.get('allowed_cell_metadata_keys'))
    for n in (nb, cleaned):
        ks = n['metadata'].get('kernelspec') or {}
        assert ks.get('language') == 'python' and ks.get('name') == 'python3', ks
    # a jupytext round trip (DEVELOPING's way of editing notebooks) keeps it too
    assert 'kernelspec' in nb['metadata'].get('jupytext', {}).get('notebook_metadata_filter', 'kernelspec')


def test_plain_papermill_command_runs_an_experiment(tmp_path):
    "The command in the notebook's header, with nothing else: no -k, no --language."
    import os, subprocess, sys
    env = {**os.environ, 'CHECKEVAL_RUNS': str(tmp_path / 'runs'), 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1',
           'PATH': str(Path(sys.executable).parent) + os.pathsep + os.environ.get('PATH', '')}
    r = subprocess.run([str(Path(sys.executable).parent / 'papermill'), 'nbs/experiments/run_lexical.ipynb',
                        str(tmp_path / 'out.ipynb'), '-p', 'benchmark', 'legal_sts', '-y', 'metrics: [bleu]'],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    assert 'No language found' not in r.stderr
    assert list((tmp_path / 'runs' / 'legal_sts' / 'bleu' / 'none').glob('*/judgments.jsonl'))


LIB_NBS = sorted((ROOT/'nbs').glob('*.ipynb'))

@pytest.mark.parametrize('path', LIB_NBS, ids=lambda p: p.name)
def test_example_cells_do_not_mix_imports_and_code(path):
    "nbdev's doc processing runs every cell that holds an import: an example cell that imports breaks the docs page."
    bad = []
    for i, c in enumerate(json.loads(path.read_text())['cells']):
        src = ''.join(c['source'])
        if c['cell_type'] != 'code' or src.startswith(('#| export', '#|export', '#| hide')): continue
        lines = [l for l in src.split('\n') if l.strip() and not l.strip().startswith('#')]
        imports = [l for l in lines if re.match(r'\s*(import |from \S+ import )', l)]
        if imports and len(imports) < len(lines): bad.append((i, imports))
    assert not bad, f'move these imports to the notebook\'s `#| hide` import cell: {bad}'
