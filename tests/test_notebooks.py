"Notebook hygiene: papermill's parameters tag survives nbdev-clean; committed notebooks carry no outputs."
import copy, json
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
