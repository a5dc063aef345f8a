# Reference outputs of R's `dr` package on the `ais` data, as JSON.
#
# Writes, into OUTDIR (default: the current directory),
#   ais.csv, ais_model.csv          the data and the model columns (%.17g)
#   ais_<config>.json               one file per fit (see `configs` below)
#   sessionInfo.txt                 the R session that made them
# Usage (from tests/results/dr):   Rscript make_reference.R [OUTDIR]
#
# Needs R with the packages dr (3.0.11 made the stored files), MASS (a
# dependency of dr) and jsonlite (string escaping only).  The JSON layout and
# every recorded quantity are described in NOTE.md; this script calls dr's
# public functions and records, with `trace()`, the arguments and results of
# two internal ones (`bentlerxie.pvalue`, `dr.test.save`) without changing them.

suppressPackageStartupMessages({
    library(dr)
    library(jsonlite)
})
options(width = 80, digits = 7)

args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args) >= 1) args[[1]] else "."
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)

# ---------------------------------------------------------------- JSON writer
# Numbers as %.17g (exact round trip), NA as null; atomic vectors are arrays
# unless wrapped in sc() (a scalar); named lists are objects, unnamed lists
# arrays.  Numeric arrays and matrix rows print on one line.

sc <- function(x) structure(list(x), class = "json_scalar")

num17 <- function(x) {
    out <- sprintf("%.17g", as.numeric(x))
    out[is.na(x)] <- "null"
    out
}

atom <- function(x) {
    if (is.character(x) || is.factor(x)) {
        vapply(as.character(x), function(s) {
            if (is.na(s)) "null" else as.character(toJSON(s, auto_unbox = TRUE))
        }, "", USE.NAMES = FALSE)
    } else if (is.logical(x)) {
        ifelse(is.na(x), "null", ifelse(x, "true", "false"))
    } else {
        num17(x)
    }
}

to_json <- function(x, indent = 0) {
    pad <- strrep(" ", indent + 2)
    if (is.null(x)) return("null")
    if (inherits(x, "json_scalar")) return(atom(x[[1]]))
    if (is.list(x) && !is.null(names(x))) {
        if (length(x) == 0) return("{}")
        body <- vapply(names(x), function(k) {
            paste0(pad, toJSON(k, auto_unbox = TRUE), ": ", to_json(x[[k]], indent + 2))
        }, "", USE.NAMES = FALSE)
        return(paste0("{\n", paste(body, collapse = ",\n"), "\n", strrep(" ", indent), "}"))
    }
    if (is.list(x)) {
        if (length(x) == 0) return("[]")
        if (all(vapply(x, function(e) is.atomic(e) && !inherits(e, "json_scalar"), TRUE))) {
            rows <- vapply(x, function(e) paste0("[", paste(atom(e), collapse = ","), "]"), "")
            return(paste0("[", paste(rows, collapse = ","), "]"))
        }
        body <- vapply(x, function(e) paste0(pad, to_json(e, indent + 2)), "")
        return(paste0("[\n", paste(body, collapse = ",\n"), "\n", strrep(" ", indent), "]"))
    }
    sep <- if (is.character(x) || is.factor(x)) ", " else ","
    paste0("[", paste(atom(x), collapse = sep), "]")
}

# A matrix: its dimnames and its rows; a table (data frame): its columns.
json_matrix <- function(m) {
    m <- as.matrix(m)
    list(rownames = rownames(m), colnames = colnames(m),
         data = lapply(seq_len(nrow(m)), function(i) unname(m[i, ])))
}

json_table <- function(d) {
    d <- as.data.frame(d)
    list(rownames = rownames(d), colnames = colnames(d),
         columns = setNames(lapply(colnames(d), function(k) unname(d[[k]])), colnames(d)))
}

write_json_file <- function(x, file) {
    writeLines(to_json(x), file.path(outdir, file), useBytes = TRUE)
}

# ------------------------------------------------------------------- the data

data(ais, package = "dr")
write_csv17 <- function(d, file) {
    cols <- lapply(d, function(v) if (is.numeric(v)) num17(v) else as.character(v))
    lines <- do.call(paste, c(cols, sep = ","))
    writeLines(c(paste(names(d), collapse = ","), lines), file.path(outdir, file))
}
write_csv17(ais, "ais.csv")
preds <- c("SSF", "Wt", "Hg", "Ht", "WCC", "RCC", "Hc", "Ferr")
model_cols <- data.frame(LBM = ais$LBM)
for (v in preds) model_cols[[paste0("log", v)]] <- log(ais[[v]])
write_csv17(model_cols, "ais_model.csv")

FORM <- LBM ~ log(SSF) + log(Wt) + log(Hg) + log(Ht) + log(WCC) + log(RCC) + log(Hc) + log(Ferr)

# ------------------------------------------- recording two internal functions
# Each call of bentlerxie.pvalue (weights `coef`, observed value `f`) and the
# local statistics of dr.test.save at its exit are appended to a log.

rec <- new.env()
rec$bx <- list()
rec$save <- NULL
.ref_record_bx <- function(coef, f, ans) {
    rec$bx[[length(rec$bx) + 1]] <- list(
        coef = unname(coef), f = sc(f), test_adj = sc(ans$test.adj),
        df_adj = sc(ans$df.adj), pval_adj = sc(ans$pval.adj))
    invisible(NULL)
}
.ref_record_save <- function(st.normal, df.normal, pv.normal, st.general, df.general,
                             pv.general) {
    rec$save <- list(`st.normal` = st.normal, `df.normal` = df.normal,
                     `pv.normal` = pv.normal, `st.general` = st.general,
                     `df.general` = df.general, `pv.general` = pv.general)
    invisible(NULL)
}
invisible(trace("bentlerxie.pvalue", where = asNamespace("dr"), print = FALSE,
                exit = quote(.ref_record_bx(coef, f, returnValue()))))
invisible(trace("dr.test.save", where = asNamespace("dr"), print = FALSE,
                exit = quote(.ref_record_save(st.normal, df.normal, pv.normal,
                                              st.general, df.general, pv.general))))

# Run `expr`, returning its value and what the two recorders saw meanwhile.
recorded <- function(expr) {
    rec$bx <- list()
    rec$save <- NULL
    value <- expr
    list(value = value, bx = rec$bx, save = rec$save)
}

# ------------------------------------------------------------------ the fits

SIR_NOTE <- paste(
    "dr.coordinate.test.sir: pval='general' (default) returns the p-value of the",
    "restricted test (weights 1-evalues); pval='restricted' returns the general-test",
    "p-value (see README).")

# Each fit is its call written out (formula and arguments spliced in, so that
# the recorded call and the printed summaries show them as a user types them).
fit_call <- function(...) {
    eval(as.call(c(list(quote(dr), FORM, data = quote(ais)), list(...))), globalenv())
}
configs <- list(
    sir_h8 = function() fit_call(method = "sir", nslices = 8),
    sir_hdefault = function() fit_call(method = "sir"),
    save_h8 = function() fit_call(method = "save", nslices = 8),
    phdy = function() fit_call(method = "phdy"),
    phdres = function() fit_call(method = "phdres"),
    sir_vignette_arc_wood = function() fit_call(method = "sir", nslices = 8,
                                                slice.function = quote(dr.slices.arc),
                                                chi2approx = "wood", numdir = 4)
)
nslices_requested <- list(sir_h8 = 8, save_h8 = 8, sir_vignette_arc_wood = 8)

coordinate_tests <- function(fit) {
    lapply(c("~.-log(RCC)", "~.-log(Ht)"), function(h) {
        hyp <- as.formula(h)
        run <- recorded(dr.coordinate.test(fit, hyp))
        out <- list(hypothesis = sc(h), call = sc(sprintf("dr.coordinate.test(fit, %s)", h)),
                    result = json_table(run$value), bentler_xie = run$bx)
        if (fit$method == "sir") {
            out$result_pval_restricted <- json_table(
                dr.coordinate.test(fit, hyp, pval = "restricted"))
            out$note <- sc(SIR_NOTE)
        }
        out
    })
}

# The tests of one fit: numdir rows, then all p rows, with what was recorded.
dimension_tests <- function(fit, out) {
    p <- length(fit$evalues)
    for (what in list(list("dr_test", fit$numdir), list("dr_test_all", p))) {
        run <- recorded(dr.test(fit, what[[2]]))
        out[[what[[1]]]] <- json_table(run$value)
        if (fit$method == "save") out[[paste0(what[[1]], "_save_internals")]] <- run$save
        if (fit$method == "phdres") out[[paste0(what[[1]], "_bentler_xie")]] <- run$bx
    }
    out
}

reference <- function(config) {
    fit <- configs[[config]]()
    p <- length(fit$evalues)
    h <- nslices_requested[[config]]
    out <- list(
        dataset = sc("ais"), config = sc(config),
        data_file = sc("data/ais.csv (model columns in data/ais_model.csv)"),
        r_call = sc(paste(deparse(fit$call, width.cutoff = 500L), collapse = " ")),
        dr_version = sc(as.character(packageVersion("dr"))),
        R_version = sc(R.version.string),
        method = sc(fit$method), n = sc(fit$cases), p = sc(p),
        predictor_names = rownames(fit$evectors),
        chi2approx = sc(fit$chi2approx),
        nslices_requested = sc(if (is.null(h)) "default: max(8, p+3)" else h))
    if (!is.null(fit$slice.info)) {
        out$slice_info <- list(nslices = sc(fit$slice.info$nslices),
                               slice_sizes = fit$slice.info$slice.sizes,
                               slice_indicator = fit$slice.info$slice.indicator)
    }
    out$qr_R <- json_matrix(qr.R(fit$qr))
    out$qr_pivot <- fit$qr$pivot
    out$numdir <- sc(fit$numdir)
    out$evalues <- unname(fit$evalues)
    out$evectors <- json_matrix(fit$evectors)
    out$raw_evectors <- json_matrix(fit$raw.evectors)
    out$M <- json_matrix(fit$M)
    fit_summary <- recorded(summary(fit))$value
    out$summary_evalues_table <- json_matrix(fit_summary$evalues)
    out <- dimension_tests(fit, out)
    if (fit$method %in% c("sir", "save")) out$coordinate_tests <- coordinate_tests(fit)
    out$summary_text <- capture.output(print(fit_summary))
    out$print_text <- capture.output(print(fit))
    write_json_file(out, sprintf("ais_%s.json", config))
    cat("wrote", sprintf("ais_%s.json", config), "\n")
}

for (config in names(configs)) reference(config)
writeLines(capture.output(sessionInfo()), file.path(outdir, "sessionInfo.txt"))
