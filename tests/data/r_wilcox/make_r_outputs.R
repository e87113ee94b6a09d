# Reference outputs of R's signed-rank tests and intervals for tests/test_stats_oracles.py (CI has no R).
#
#   apt-get install -y --no-install-recommends r-base-core r-cran-exactranktests r-cran-coin
#   Rscript tests/data/r_wilcox/make_r_outputs.R > tests/data/r_wilcox/r_outputs.json
#
# Per vector d, at confidence 0.95:
#   wilcox_test      stats::wilcox.test(d, conf.int = TRUE, exact = TRUE): exact (psignrank) without
#                    ties or zeros; with them the normal approximation with continuity correction (zeros
#                    dropped) and a uniroot interval, with R's warnings.
#                    achieved_exact: 1 - 2 psignrank(qu - 1), the confidence of its exact interval.
#   wilcox_exact     exactRankTests::wilcox.exact(d, conf.int = TRUE, exact = TRUE): exact conditional p
#                    (zeros dropped); its interval with ties compares the statistic at each Walsh average
#                    with the quantiles of the null of the data at 0, so it is not this test's inversion.
#   coin_pratt_p     coin::wilcoxsign_test(distribution = "exact", zero.method = "Pratt"): the exact
#                    conditional test with Pratt's zeros (skadapt's convention); coin_wilcoxon_p the same
#                    with zeros dropped.
#   coin_inversion   the closure of {theta : coin Pratt p(d - theta) > 0.05}, theta over the distinct
#                    Walsh averages and the midpoints between them (and one shift beyond each end);
#                    `contiguous` says whether the accepted shifts form one run.
suppressPackageStartupMessages({
  library(exactRankTests)
  library(coin)
})

vectors <- list(
  untied_10 = c(-0.5, 0.3, 1.1, 1.4, 2.0, 2.2, 2.9, 3.1, 3.8, 4.5),
  untied_20 = c(1.329, 1.942, 1.447, -0.673, -1.093, 0.367, 1.161, 0.809, 2.11, 1.051, 0.94, -0.431,
                -0.808, 1.784, 0.349, 1.112, -1.076, -0.136, -0.991, -0.476),
  untied_64 = c(0.445, 1.528, -0.243, -0.178, 1.185, 0.194, 0.661, -0.429, 0.323, 0.732, -1.027, -0.395,
                0.723, 2.549, 0.762, 0.241, -0.545, 0.692, -2.201, 0.25, -0.03, -0.219, 2.62, -2.174,
                0.278, 0.369, 0.767, -1.302, -0.167, -1.195, 0.172, 0.496, 0.464, 0.102, 0.486, 0.477,
                0.705, 0.325, -1.483, -0.515, 0.646, -0.61, -0.498, 0.413, 0.254, 1.194, 0.812, -0.135,
                0.414, -2.559, -0.497, 0.153, -2.087, -0.022, 0.552, 1.335, 0.703, 2.184, 1.828, -1.334,
                0.074, 0.144, 0.392, -0.273),
  tied_signs = c(-1, 1, -1, 1, 1, 1, 1, -1, 1, 1),
  tied_zeros_12 = c(0, 0, 2, -1, 3, 3, 1, -2, 4, 0, 1, 2),
  tied_zeros_15 = c(2, -1, 0, 3, 3, 1, -2, 4, 1, 1, 0, 2, 5, -1, 2),
  tied_halves_12 = c(0.5, 1.5, -0.5, 1, 1, 2.5, 0, -1, 1.5, 0.5, 2, 3)
)
conf <- 0.95

num <- function(x) {
  if (length(x) == 1) {
    if (is.na(x)) "null" else if (is.infinite(x)) (if (x > 0) "1e999" else "-1e999") else sprintf("%.17g", x)
  } else {
    paste0("[", paste(vapply(x, num, ""), collapse = ", "), "]")
  }
}
str <- function(x) paste0("\"", gsub("\"", "'", gsub("\n", " ", x)), "\"")
obj <- function(fields) {
  paste0("{", paste(sprintf("\"%s\": %s", names(fields), unlist(fields)), collapse = ", "), "}")
}

capture <- function(expr) {
  warnings <- character(0)
  value <- withCallingHandlers(expr, warning = function(w) {
    warnings <<- c(warnings, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = warnings)
}

coin_p <- function(x, zero) {
  z <- rep(0, length(x))
  as.numeric(pvalue(wilcoxsign_test(x ~ z, distribution = "exact", zero.method = zero)))
}

inversion <- function(d, alpha) {
  w <- sort(unique(as.vector(outer(d, d, "+")[!lower.tri(diag(length(d)))] / 2)))
  grid <- c(w[1] - 1, as.vector(rbind(w, c((w[-1] + w[-length(w)]) / 2, NA))), w[length(w)] + 1)
  grid <- grid[!is.na(grid)]
  p <- vapply(grid, function(theta) coin_p(d - theta, "Pratt"), 0)
  accepted <- which(p > alpha)
  low <- max(w[w <= grid[min(accepted)]])
  high <- min(w[w >= grid[max(accepted)]])
  if (min(accepted) == 1) low <- w[1]
  if (max(accepted) == length(grid)) high <- w[length(w)]
  list(low = low, high = high, contiguous = all(diff(accepted) == 1))
}

entries <- character(0)
for (name in names(vectors)) {
  d <- vectors[[name]]
  wt <- capture(wilcox.test(d, conf.int = TRUE, conf.level = conf, exact = TRUE))
  n <- length(d)
  ties_or_zeros <- any(d == 0) || length(unique(abs(d))) < n
  achieved <- if (ties_or_zeros) NA else {
    qu <- max(1, qsignrank((1 - conf) / 2, n))
    1 - 2 * psignrank(qu - 1, n)
  }
  we <- capture(wilcox.exact(d, conf.int = TRUE, conf.level = conf, exact = TRUE))
  fields <- list(
    d = num(d),
    wilcox_test = obj(list(
      method = str(wt$value$method), p = num(wt$value$p.value), statistic_v = num(unname(wt$value$statistic)),
      conf_int = num(as.numeric(wt$value$conf.int)), conf_level = num(attr(wt$value$conf.int, "conf.level")),
      achieved_exact = num(achieved), estimate = num(unname(wt$value$estimate)),
      warnings = paste0("[", paste(vapply(wt$warnings, str, ""), collapse = ", "), "]")
    )),
    wilcox_exact = obj(list(
      p = num(we$value$p.value), conf_int = num(as.numeric(we$value$conf.int)),
      estimate = num(unname(we$value$estimate))
    ))
  )
  if (n <= 20) {
    inv <- inversion(d, 1 - conf)
    fields$coin_pratt_p <- num(coin_p(d, "Pratt"))
    fields$coin_wilcoxon_p <- num(coin_p(d, "Wilcoxon"))
    fields$coin_inversion <- obj(list(
      low = num(inv$low), high = num(inv$high), contiguous = tolower(as.character(inv$contiguous))
    ))
  }
  entries <- c(entries, sprintf("  \"%s\": %s", name, obj(fields)))
}
cat("{\n", sprintf("  \"_r_version\": %s,\n", str(R.version.string)),
    sprintf("  \"_packages\": %s,\n", str(paste0("exactRankTests ", packageVersion("exactRankTests"),
                                                  ", coin ", packageVersion("coin")))),
    paste(entries, collapse = ",\n"), "\n}\n", sep = "")
