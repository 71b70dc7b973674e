"""Heavier statistical checks of checkeval.metaeval (synthetic data, a few seconds)."""
import numpy as np, pandas as pd, pytest
from scipy import stats
from checkeval.metaeval.correlation import level_correlations, williams_test, paired_bootstrap, weighted_kendall, _wspearman, _wpearson
from checkeval.metaeval.agreement import agreement_rows, krippendorff_alpha, fleiss_kappa
from checkeval.metaeval.rankings import bradley_terry


def synth(n_docs=60, n_sys=8, seed=0, noise=1.0):
    r = np.random.default_rng(seed)
    q = r.normal(0, 1, n_docs * n_sys)
    return pd.DataFrame(dict(group_id=np.repeat(np.arange(n_docs), n_sys), system_id=np.tile(np.arange(n_sys), n_docs),
                             human=np.clip(np.round(3 + q), 1, 5), score=q + r.normal(0, noise, len(q))))


@pytest.mark.parametrize('level', ['sample', 'summary', 'system'])
def test_bootstrap_matches_explicit_resampling(level):
    "Vectorised bootstrap == recomputing the statistic on explicitly resampled data (same resamples)."
    df = synth()
    res = level_correlations(df.score, df.human, df.group_id, df.system_id, level=level, n_boot=40, seed=3, min_items=0)   # 8 systems: below MIN_ITEMS
    from checkeval.metaeval import boot_group_weights
    W = boot_group_weights(60, 40, np.random.default_rng(3))
    boots = {s: [] for s in ('pearson', 'spearman', 'kendall')}
    for b in range(40):
        parts = [df[df.group_id == g].assign(group_id=f'{g}-{k}') for g in range(60) for k in range(int(W[b, g]))]
        rs = pd.concat(parts)
        r = level_correlations(rs.score, rs.human, rs.group_id, rs.system_id, level=level, min_items=0)
        for s, v in zip(r.statistic, r.value): boots[s].append(v)
    for s in boots:
        lo, hi = np.quantile(boots[s], [0.025, 0.975])
        row = res.set_index('statistic').loc[s]
        assert abs(row.ci_low - lo) < 1e-4 and abs(row.ci_high - hi) < 1e-4, (s, row, lo, hi)


def test_bootstrap_ci_covers_truth():
    "Coverage sanity: over 40 synthetic data sets the 95 % CI of pooled Pearson covers the population value most of the time."
    r = np.random.default_rng(0)
    rho, cover = 0.5, 0
    for i in range(40):
        n_g, m = 50, 6
        z = r.multivariate_normal([0, 0], [[1, rho], [rho, 1]], n_g * m)
        res = level_correlations(z[:, 0], z[:, 1], np.repeat(np.arange(n_g), m), level='sample', statistics=['pearson'], n_boot=300, seed=i)
        cover += res.ci_low[0] <= rho <= res.ci_high[0]
    assert cover >= 34


def test_williams_test_size_under_null():
    "Williams' test keeps roughly its nominal size when two metrics correlate equally with humans."
    r = np.random.default_rng(1)
    rej, n = 0, 80
    for _ in range(300):
        h = r.normal(size=n); common = r.normal(size=n)
        a = 0.5 * h + 0.6 * common + r.normal(size=n); b = 0.5 * h + 0.6 * common + r.normal(size=n)
        p = williams_test(np.corrcoef(h, a)[0, 1], np.corrcoef(h, b)[0, 1], np.corrcoef(a, b)[0, 1], n)['p']
        rej += p < 0.05
    assert 0.02 <= rej / 300 <= 0.09


def test_weighted_statistics_large():
    r = np.random.default_rng(2)
    x = r.integers(1, 6, 300).astype(float); y = x + r.normal(0, 2, 300)
    w = r.integers(0, 4, 300).astype(float)
    xd, yd = np.repeat(x, w.astype(int)), np.repeat(y, w.astype(int))
    assert abs(weighted_kendall(w[None], x, y)[0] - stats.kendalltau(xd, yd)[0]) < 1e-5
    assert abs(_wspearman(w[None], x, y)[0] - stats.spearmanr(xd, yd)[0]) < 1e-9
    assert abs(_wpearson(w[None], x, y)[0] - stats.pearsonr(xd, yd)[0]) < 1e-9


def test_agreement_with_failures():
    "Failed answers (NaN) are missing for alpha and drop the unit for kappa."
    r = np.random.default_rng(4)
    base = (r.random(200) < .5).astype(float)
    rows = []
    for j in range(3):
        v = np.where(r.random(200) < .1, 1 - base, base)
        if j == 2: v[:20] = np.nan
        rows += [dict(judge=f'j{j}', item_id=i // 5, question_id=i % 5, dimension='d', value=v[i]) for i in range(200)]
    ag = agreement_rows(pd.DataFrame(rows), {'all': ['j0', 'j1', 'j2']}).set_index('statistic')
    assert ag.loc['fleiss_kappa', 'n_units'] == 180
    assert ag.loc['krippendorff_alpha', 'n_units'] == 200
    assert 0.5 < ag.loc['krippendorff_alpha', 'value'] < 0.9


def test_bradley_terry_recovers_order():
    r = np.random.default_rng(5)
    true = {'a': 1200, 'b': 1100, 'c': 1000, 'd': 900}
    rows = []
    for _ in range(2000):
        x, y = r.choice(list(true), 2, replace=False)
        p = 1 / (1 + 10 ** ((true[y] - true[x]) / 400))
        rows.append(dict(model_a=x, model_b=y, winner='A' if r.random() < p else 'B'))
    bt = bradley_terry(pd.DataFrame(rows), n_boot=20)
    assert bt.model.tolist() == ['a', 'b', 'c', 'd']
    gaps = np.diff(bt.rating.to_numpy())
    assert np.all(np.abs(gaps + 100) < 35), gaps
