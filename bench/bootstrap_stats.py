"""Bootstrap statistics of the rehearsal's planted checks and of the tables' confidence intervals, against the libraries' loops.

Synthetic data at SummEval's size (1,600 items; 12 judges for the agreement), 1,000 resamples of the items (300 for
Krippendorff's alpha, as `checkeval.reproduction.rehearsal.planted_agreement_checks` draws), timed in one run:
  - Kendall's tau-b of every resample: `checkeval.reproduction.rehearsal._resamples` (one float32 product per 256 resamples)
    against `scipy.stats.kendalltau` called per resample (what the planted checks did above 400 items);
  - Spearman's rho of every resample: `checkeval.reproduction.rehearsal._resamples` (mid-ranks from each resample's item counts)
    against `scipy.stats.rankdata` of every resample and a Pearson of the ranks (what the planted checks did before);
  - Krippendorff's interval alpha of every resample: `checkeval.reproduction.rehearsal.alpha_resamples` (item sums) against
    `krippendorff.alpha` per resample (what the agreement checks did);
  - the weighted Kendall of the tables' bootstrap CIs: `checkeval.metaeval.weighted_kendall` (one product, ties from class sums)
    against the same statistic with three products (the previous code, written out below).
Each pair is checked to give the same values (max abs difference printed). The data are synthetic: the numbers say how
fast the statistics are, nothing about any judge. The last line printed is one JSON object.
"""
import json, os, sys, time
import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from checkeval.reproduction.rehearsal import _resamples, alpha_resamples
from checkeval.metaeval import weighted_kendall

N, JUDGES, BOOT, BOOT_ALPHA = 1600, 12, 1000, 300


def three_products(W, x, y):
    "The weighted Kendall before: concordance and both tie terms each as a float32 quadratic form."
    sx, sy = np.sign(x[:, None] - x[None]), np.sign(y[:, None] - y[None])
    W32 = W.astype(np.float32)
    def quad(M): return ((W32 @ M.astype(np.float32)) * W32).sum(1, dtype=np.float64)
    num, dx, dy = quad(sx * sy), quad(sx * sx), quad(sy * sy)
    with np.errstate(invalid='ignore', divide='ignore'): t = num / np.sqrt(dx * dy)
    return np.where((dx > 0) & (dy > 0), np.clip(t, -1, 1), np.nan)


def ranked_rows(h, z, idx):
    "Spearman's rho of every resample as before: each resample ranked (scipy), then a Pearson of the ranks, all rows at once."
    a, b = stats.rankdata(h[idx], axis=1), stats.rankdata(z[idx], axis=1)
    a, b = a - a.mean(1, keepdims=True), b - b.mean(1, keepdims=True)
    with np.errstate(invalid='ignore', divide='ignore'): return (a*b).sum(1)/np.sqrt((a*a).sum(1)*(b*b).sum(1))


def timed(f, *a):
    t = time.perf_counter(); r = f(*a); return r, time.perf_counter() - t


def main():
    import krippendorff
    rng = np.random.default_rng(0)
    h = np.round(rng.normal(size=N) * 2)                    # human ratings with ties
    z = np.round(h + rng.normal(size=N), 1)                 # a judge's scores
    idx = rng.integers(0, N, (BOOT, N))
    k_new, t_k_new = timed(_resamples, 'kendall', h, z, idx)
    k_old, t_k_old = timed(lambda: np.array([stats.kendalltau(h[i], z[i])[0] for i in idx]))
    s_new, t_s_new = timed(_resamples, 'spearman', h, z, idx)
    s_old, t_s_old = timed(ranked_rows, h, z, idx)
    M = np.round(h[None] + rng.normal(size=(JUDGES, N)) * 1.5)
    ia = rng.integers(0, N, (BOOT_ALPHA, N))
    a_new, t_a_new = timed(alpha_resamples, M, ia)
    a_old, t_a_old = timed(lambda: np.array([krippendorff.alpha(reliability_data=M[:, i], level_of_measurement='interval') for i in ia]))
    g = rng.integers(0, 100, N)                             # 100 documents, resampled as groups
    W = rng.multinomial(100, np.ones(100) / 100, size=BOOT).astype(float)[:, g]
    w_new, t_w_new = timed(weighted_kendall, W, h, z)
    w_old, t_w_old = timed(three_products, W, h, z)
    out = dict(bench='bootstrap_stats', items=N, resamples=BOOT,
               kendall_resamples_s=round(t_k_new, 3), kendall_scipy_loop_s=round(t_k_old, 3), kendall_speedup=round(t_k_old / t_k_new, 2),
               kendall_max_abs_diff=float(np.nanmax(np.abs(k_new - k_old))),
               spearman_resamples_s=round(t_s_new, 3), spearman_rankdata_s=round(t_s_old, 3), spearman_speedup=round(t_s_old / t_s_new, 2),
               spearman_max_abs_diff=float(np.nanmax(np.abs(s_new - s_old))),
               alpha_resamples=BOOT_ALPHA, alpha_judges=JUDGES, alpha_sums_s=round(t_a_new, 4), alpha_library_loop_s=round(t_a_old, 3),
               alpha_speedup=round(t_a_old / t_a_new, 1), alpha_max_abs_diff=float(np.nanmax(np.abs(a_new - a_old))),
               weighted_kendall_one_product_s=round(t_w_new, 3), weighted_kendall_three_products_s=round(t_w_old, 3),
               weighted_kendall_speedup=round(t_w_old / t_w_new, 2), weighted_kendall_max_abs_diff=float(np.nanmax(np.abs(w_new - w_old))),
               load_average=[round(x, 2) for x in os.getloadavg()], cpus=os.cpu_count())
    print(json.dumps(out))


if __name__ == '__main__':
    main()
