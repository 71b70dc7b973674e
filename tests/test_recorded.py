"""checkeval.reproduction.recorded.write_tables merges its rows into the shared long CSVs (real recorded data, no judge)."""
import numpy as np, pandas as pd, pytest

data = pytest.importorskip('checkeval.data')
if not all(data.available(p) for p in ('judgments/check_eval_legal_sts_gpt-4-turbo/stj_h_coherence_candidate.json',
                                        'judgments/unieval_topical_chat/predictions.jsonl', 'benchmarks/legal_sts_pt/stj_sample_32.jsonl')):
    pytest.skip('data mirror not available', allow_module_level=True)

from checkeval.reproduction import recorded
from checkeval.metaeval import CORRELATION_COLUMNS, AGREEMENT_COLUMNS
from checkeval.reproduction.reporting import merge_long_csv
from checkeval.reproduction.recorded import RECORDED_LEGAL_JUDGE


def _fake_hanna(levels=('sample', 'system'), n_boot=0):
    "A small stand-in for hanna_llm (the real one takes ~8 s): same shapes, two rows each."
    corr = pd.DataFrame([dict(benchmark='hanna', method='likert', variant='hanna_prompt1', judge='chatgpt', dimension=d,
                              level='sample', statistic='kendall', value=v, ci_low=np.nan, ci_high=np.nan, n=1056)
                         for d, v in [('coherence', 0.3), ('average', 0.3)]])
    agree = pd.DataFrame([dict(benchmark='hanna', method='likert', judge_group='all_llms/hanna_prompt1', dimension=d, unit='item',
                               statistic='krippendorff_alpha', value=0.5, n_judges=5, n_units=1056) for d in ('coherence', 'average')])
    summ = pd.DataFrame([dict(judge='chatgpt', variant='hanna_prompt1', kendall_sample_avg=0.3, failed=0, ratings=10)])
    return corr, agree, summ


def test_write_tables_keeps_other_writers_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(recorded, 'hanna_llm', _fake_hanna)
    other = pd.DataFrame([dict(benchmark='summeval', method='geval', variant='default', judge='gpt-4o', dimension='coherence',
                               level='summary', statistic='kendall', value=0.42, ci_low=np.nan, ci_high=np.nan, n=100)])
    # a row with a key that write_tables produces (Check-Eval F1 on legal STS), holding a wrong value
    stale = pd.DataFrame([dict(benchmark='legal_sts', method='keypoint', variant='f1', judge=RECORDED_LEGAL_JUDGE, dimension='average',
                               level='sample', statistic='pearson', value=-9.0, ci_low=np.nan, ci_high=np.nan, n=1)])
    merge_long_csv(other, 'correlations', tmp_path, source='paper:checkeval')
    merge_long_csv(stale, 'correlations', tmp_path, source='recorded')
    other_ag = pd.DataFrame([dict(benchmark='summeval', method='checkeval', judge_group='open', dimension='coherence', unit='question',
                                  statistic='krippendorff_alpha', value=0.7, n_judges=3, n_units=50)])
    merge_long_csv(other_ag, 'agreement', tmp_path, source='paper:checkeval')

    paths = recorded.write_tables(tmp_path, n_boot=0, benchmarks=['legal_sts'])
    c, a = pd.read_csv(paths['correlations']), pd.read_csv(paths['agreement'])
    assert list(c.columns) == CORRELATION_COLUMNS + ['source'] and list(a.columns) == AGREEMENT_COLUMNS + ['source']
    # the other writers' rows survive, untouched
    assert c[c.judge == 'gpt-4o'].value.tolist() == [0.42]
    assert a[a.judge_group == 'open'].value.tolist() == [0.7]
    # the row with write_tables' key is replaced by the recomputed value (printed 0.58 in Check-Eval Table 1)
    f1 = c[(c.benchmark == 'legal_sts') & (c.method == 'keypoint') & (c.variant == 'f1') & (c.dimension == 'average') & (c.statistic == 'pearson')]
    assert len(f1) == 1 and abs(f1.value.item() - 0.58) < 0.0051 and f1.n.item() == 32
    # its own rows are all there: lexical (judge none), UniEval, Check-Eval, HANNA
    assert {'none', RECORDED_LEGAL_JUDGE, 'chatgpt'} <= set(c.judge)
    assert {'legal_sts', 'topical_chat', 'hanna'} <= set(c.benchmark)
    assert set(a.benchmark) == {'summeval', 'hanna'}
    # a rerun changes nothing (keyed merge, sorted rows)
    before = paths['correlations'].read_bytes(), paths['agreement'].read_bytes()
    recorded.write_tables(tmp_path, n_boot=0, benchmarks=['legal_sts'])
    assert (paths['correlations'].read_bytes(), paths['agreement'].read_bytes()) == before
    assert paths['markdown'].exists()


def test_shared_correlations_keep_no_stale_rows(tmp_path, monkeypatch):
    "A writer's rows it no longer writes leave figures/tables/correlations.csv (issue 27: recomputable, no stale rows)."
    from checkeval.reproduction.papers import merge_paper_rows
    monkeypatch.setenv('CHECKEVAL_FIGURES', str(tmp_path))
    row = lambda judge: dict(benchmark='seal_x', method='seal', variant='default', judge=judge, dimension='coherence',
                             level='sample', statistic='kendall', value=0.3, ci_low=np.nan, ci_high=np.nan, n=40)
    (tmp_path/'seal').mkdir()
    pd.DataFrame([row('gpt-4o'), row('gpt-4-turbo')]).to_csv(tmp_path/'seal'/'correlations.csv', index=False)
    merge_long_csv(pd.DataFrame([row('none')]), 'correlations', tmp_path/'tables', source='recorded', replace=True)
    merge_paper_rows()
    shared = lambda: pd.read_csv(tmp_path/'tables'/'correlations.csv', keep_default_na=False)
    assert sorted(shared().judge) == ['gpt-4-turbo', 'gpt-4o', 'none']
    pd.DataFrame([row('gpt-4o')]).to_csv(tmp_path/'seal'/'correlations.csv', index=False)   # the paper's rerun: one judge left
    merge_paper_rows()
    assert sorted(shared().judge) == ['gpt-4o', 'none'] and set(shared().source) == {'paper:seal', 'recorded'}
