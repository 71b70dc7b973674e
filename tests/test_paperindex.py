"""INDEX statuses come from what the tables hold (issue 26 item 5): synthetic table files, no judge, no reproduction."""
import json
import numpy as np, pandas as pd, pytest, yaml
from checkeval.reproduction.index import item_status, write_index, judge_content
from checkeval.reproduction.reporting import save_paper_table, correlation_table, safe_correlation_rows, table_content
from checkeval.metaeval import correlation_rows, dimension_average

ITEM = {'id': 'Table 1', 'what': 'correlations', 'files': ['t.md'], 'needs': {'judges': 'GPT-4o'}}


def _table(d, csv, judges=('smollm2',), content=None):
    (d/'t.md').write_text('x'); (d/'t.csv').write_text(csv)
    prov = {'config': {'judges': list(judges), 'source': 'runs'}}
    if content is not None: prov['content'] = content
    (d/'t.provenance.json').write_text(json.dumps(prov))


def test_table_of_nans_is_built_no_value(tmp_path):
    "Before: 'produced by smollm2 on 30 items' for a table without a single number from smollm2."
    _table(tmp_path, 'judge,method,coherence ρ,fluency ρ,n\nsmollm2,geval,,,30\nsmollm2,seal,,,30\n')
    st, why = item_status(ITEM, {}, False, root=tmp_path)
    assert st == 'built, no value: the table holds no number (n = 30)'
    assert 'no number from it' in why


def test_four_item_correlation_counts_no_value(tmp_path):
    "An old table printing ρ = 0.333 from four items (CheckEval Table 22) is not 'produced'."
    _table(tmp_path, 'judge,method,consistency ρ,n_x,n_y\nsmollm2,checkeval,0.333,4,4/4/4/4\nnone,bleu,0.1,1600,1600\n')
    assert item_status(ITEM, {}, False, root=tmp_path)[0] == 'built, no value: fewer than 10 scored items (n = 4)'


def test_produced_counts_items_not_dimensions(tmp_path):
    "n = the items behind the values (12), not the number of dimensions averaged (2)."
    _table(tmp_path, 'judge,method,coherence ρ,fluency ρ,average ρ,n\nsmollm2,geval,0.2,0.4,0.3,12\n')
    assert item_status(ITEM, {}, False, root=tmp_path)[0] == 'produced by smollm2 on 12 items'


def test_reason_from_recorded_content(tmp_path):
    "The content stored beside the table by the reporting code wins over reading the CSV."
    content = {'value_columns': ['coherence ρ'], 'judges': {'smollm2': {'values': 0, 'n': [40], 'notes': ['coherence: constant judge scores (40 items)']}}}
    _table(tmp_path, 'judge,coherence ρ,n\nsmollm2,0.5,40\n', content=content)
    assert item_status(ITEM, {}, False, root=tmp_path)[0] == 'built, no value: constant answers'


def test_end_to_end_from_rows_to_index(tmp_path, monkeypatch):
    "Long rows with four items per run → a table without numbers, its content recorded → INDEX says built, no value."
    import checkeval.reproduction.reporting as rep
    monkeypatch.setattr(rep, 'figures_root', lambda: tmp_path/'figures')
    r = np.random.default_rng(0)
    f = pd.DataFrame(dict(benchmark='summeval', method='geval', variant='default', judge='smollm2', dimension=['coherence'] * 4 + ['fluency'] * 4,
                          item_id=[str(i % 4) for i in range(8)], group_id='g', system_id='s', score=r.normal(size=8), human=r.normal(size=8)))
    rows = safe_correlation_rows(f, statistics=['spearman'], n_boot=0)
    assert rows.value.isna().all()
    t = correlation_table(rows, ['spearman'], ['coherence', 'fluency', 'average'], root=tmp_path/'runs')
    save_paper_table(t, 'p', 't', 'T', judges=['smollm2'])
    prov = json.loads((tmp_path/'figures'/'p'/'tables'/'t.provenance.json').read_text())
    assert prov['content']['judges']['smollm2']['values'] == 0
    assert 'fewer than 10 scored items (4)' in (tmp_path/'figures'/'p'/'tables'/'t.md').read_text()
    item = dict(ITEM, files=['figures/p/tables/t.md'])
    assert item_status(item, {}, False, root=tmp_path)[0] == 'built, no value: fewer than 10 scored items (n = 4)'
    cfg = {'papers': {'p': {'title': 'P', 'notebook': 'nbs/paper/p.ipynb'}}, 'items': [dict(item, paper='p')]}
    (tmp_path/'items.yaml').write_text(yaml.safe_dump(cfg))
    text = write_index(tmp_path/'items.yaml', estimate=False, root=tmp_path).read_text()
    assert '| built, no value | 1 |' in text and 'produced by smollm2' not in text.split('## Summary')[1]


def test_average_with_missing_dimension_is_empty():
    "Before: the average over the dimensions that had a value (two of four), printed as the average."
    rows = pd.DataFrame([dict(benchmark='b', method='m', variant='default', judge='j', level='sample', statistic='spearman',
                              dimension=d, value=v, n=50, note='') for d, v in [('a', .2), ('b', .4)]])
    avg = dimension_average(rows, ['a', 'b', 'c', 'd'])
    assert np.isnan(avg.value[0]) and avg.missing[0] == 'c, d' and avg.note[0] == 'no value: c (dimension missing); d (dimension missing)'
    assert dimension_average(rows, ['a', 'b']).note[0] == 'mean of a, b'


def test_four_item_correlation_has_no_number():
    "Before: rho = 1.000 from two summaries; now NaN with the reason."
    f = pd.DataFrame(dict(score=[1., 2, 3, 4], human=[1., 2, 3, 4], group_id='g', system_id=list('abcd')))
    r = correlation_rows(f, levels=['sample', 'summary', 'system'], statistics=['spearman'])
    assert r.value.isna().all()
    assert r.note.tolist() == ['fewer than 10 scored items (4)'] * 2 + ['fewer than 10 systems (4)']
