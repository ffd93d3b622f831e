"""Every ``st.session_state`` key the app uses, named once, with what it holds.

Two kinds: state the code reads and writes itself (``st.session_state[KEY]``), and widget keys
(``key=KEY``), which Streamlit stores in the session state too. A key starting with ``_`` is
internal (never a widget). ``tests/app/logic/test_keys.py`` fails when ``ui/``, ``app_pages/``
or ``app.py`` use a literal key missing here. No Streamlit here.
"""

from __future__ import annotations

from uqcore.knobs import CONTROLLED

# ----------------------------------------------------------------- shared: app.py, ui.sidebar
UI_READY = "_ui_ready"  # True once this browser session has read its URL into the state
VIEW = "view"  # the current ui.logic.state.ViewState: everything a shareable link carries
LAST_PARAMS = "_last_params"  # the query parameters the app last wrote (Back/Forward detection)
FIRST_VISIT = "_first_visit"  # the session opened without a text: the explorer shows the landing
LANDING_STORY = "landing_story"  # the landing's preset buttons (a prefix; one key per story)
LANDING_CLOSE = "landing_close"  # the landing's "hide" button
LANDING_OTHER = "landing_other"  # the landing's switch to the paper's model (and back)
LANDING_FIND = "landing_find"  # the landing's "find three stories" button (no stored samples)
LANDING_BOX = "landing_box"  # the landing's container (CSS class st-key-landing_box in app.py)
LANDING_TALES = "landing_tales"  # its row of stories: side by side on a phone too (app.py)
LANDING_RESULT = "landing_result"  # the story's result under it (a phone's first screen)
WORK_CANCELLED = "_work_cancelled"  # the job (ui.work) the visitor cancelled last
WORK_CANCEL = "work_cancel"  # a running computation's Cancel button (a prefix: + its label)
WORK_AGAIN = "work_again"  # a cancelled computation's "Start again" button (a prefix too)
INFO = "_info"  # the CheckpointInfo the sidebar settled on in this run (None: no checkpoint)
NEW_CKPT = "_new_ckpt"  # set when the checkpoint changed: refill the settings from its own
SELECT_CKPT = "_select_ckpt"  # a checkpoint name the sidebar selects on the next run (upload)
URL_NOTES = "url_notes"  # notes about link values that had to be replaced, shown once
# the sidebar's widgets; their names are also the query parameters of ui.logic.state.to_params
CKPT = "ckpt"  # checkpoint picker
T = "T"  # samples per input
SEED = "seed"  # the seed of every draw
KNOBS = CONTROLLED  # one widget per knob of the knob table with a control, keyed by its name
SIDEBAR = (CKPT, T, SEED, *KNOBS)
# the explorer's in-page copies of T and the knobs (a phone's sidebar is closed; ui.sidebar)
MAIN_ROW = "main_knobs"  # their row (a container; CSS class st-key-main_knobs)
MAIN_KNOB = "main_"  # a copy's key: + the sidebar's key + "=" + a serial number
MAIN_KEYS = "_main_keys"  # sidebar key -> the key of its in-page copy drawn now
MAIN_SERIAL = "_main_serial"  # the last serial number a copy's key took

# ----------------------------------------------------------------- ui.cached (uploads)
UPLOAD_TMP = "_upload_tmp"  # the TemporaryDirectory of this session's uploaded checkpoints
UPLOAD_DIR = "upload_dir"  # its path (a string)

# ----------------------------------------------------------------- explorer: app_pages/explore.py
PRESET = "preset"  # the chosen example sentence (index into ui.logic.catalog.presets)
TEXT_BOX = "text_box"  # the text being typed
LABEL_BOX = "label_box"  # the gold label chosen for it ("unknown" or a label name)
# ui/explore_views.py
FIGURES = "_figures"  # figure name -> the plotly figure last drawn (for the export panel)
FIGURE_SETTINGS = "_figure_settings"  # figure name -> its view's own settings (exports)
FIGURE_PREFIX = "fig_"  # + a figure name: the key of its st.plotly_chart
ATT_LAYER, ATT_HEAD, ATT_SAMPLE, ATT_WINDOW = "att_layer", "att_head", "att_sample", "att_window"
SCALED = "scaled"  # the sidebar's temperature-scaling switch
WHOLE = "whole_text"  # explorer: read past the training length (ViewState.whole)
CONF_COVERAGE = "conf_coverage"  # the explorer's conformal coverage slider
ATT_AUTO = "att_auto"  # attention colours: fixed [0, 1] (off) or up to the largest weight
ATT_AUTO_SPREAD = "att_auto_spread"  # std map colours: fixed [0, 0.5] (off) or up to its max
CEN_LAYER, CEN_HEAD, CEN_SAMPLE, CEN_WINDOW = "cen_layer", "cen_head", "cen_sample", "cen_window"
BAM_LAYER, BAM_HEAD, BAM_QUERY = "bam_layer", "bam_head", "bam_query"  # prior vs posterior
BAM_WINDOW = "bam_window"  # the keys shown when a text has more than WINDOW tokens
EM_LAYER, EM_HEAD, EM_WINDOW = "em_layer", "em_head", "em_window"  # before vs after EM
EXPORT_FIG, EXPORT_FMT, EXPORT_RENDER = "export_fig", "export_fmt", "export_render"
WHY_ON = "why_on"  # the explorer's "why" views are on for this session
WHY_CLASS, WHY_METHOD, WHY_STEPS = "why_class", "why_method", "why_steps"  # salience: what, how
WHY_GO = "why_go"  # the button that computes integrated gradients
WHY_ASKED = "why_asked"  # the integrated-gradients requests asked for in this session
WHY_WINDOW = "why_window"  # salience: the first token shown of a long text
OCC_START, OCC_GO = "occ_start", "occ_go"  # occlusion: first word of the window, its button
OCC_ASKED = "occ_asked"  # the long-text occlusion asked for (its button was pressed)
EDIT_TEXT, EDIT_LAYER, EDIT_HEAD = "edit_text", "edit_layer", "edit_head"  # the edit view
EDIT_OF = "_edit_of"  # the sentence the edit box started from
GRID_STAT, GRID_WINDOW = "grid_stat", "grid_window"  # head grid: mean or std, token window
GRID_PICK = "grid_pick"  # head grid: the cell to open in the detailed view
GRID_OPEN = "grid_open"  # head grid: the button that opens the picked cell above
GRID_OPENED = "_grid_opened"  # (layer, head) just opened by it (a toast says so once)
WHY_CSV, OCC_CSV = "why_csv", "occ_csv"  # download buttons

# ----------------------------------------------------------------- app_pages/table3.py
T3_SOURCE = "t3_source"  # where the sentences come from (examples, pasted, CSV, random)
T3_PASTED = "t3_pasted"  # pasted lines
T3_UPLOAD = "t3_upload"  # uploaded CSV
T3_N = "t3_n"  # random sentences per domain
T3_REQUEST = "t3_request"  # the request last computed (kept across reruns)

# ----------------------------------------------------------------- app_pages/results.py
RES_CKPTS = "res_ckpts"  # checkpoints recomputed on the bundled subsets
RES_T = "res_T"  # samples per example
RES_N = "res_n"  # examples per domain
RES_N_MINE = "res_n_mine"  # rows per visitor's file (0 = all)
RES_SCORE = "res_score"  # OOD score of the ROC and histograms
RES_GO = "res_go"  # the Compute button
RES_REQUEST = "res_request"  # the request last computed
RES_TABLE_CSV, RES_ROWS_CSV = "res_table_csv", "res_rows_csv"  # download buttons
RES_COMPARISON_CSV = "res_comparison_csv"  # the comparison of every family (download)
RES_FILE_COMPARISON_CSV = "res_file_comparison_csv"  # the same on a visitor's file (download)
RES_PAIR_A, RES_PAIR_B = "res_pair_a", "res_pair_b"  # the two checkpoints compared, paired
RES_PAIR_SCORE = "res_pair_score"  # the uncertainty whose AUROC for errors they compare
RES_PAIR_CSV = "res_pair_csv"  # the paired verdict (download)
RES_REPORT = "res_report"  # Results: the HTML report (download)
RES_PAIR_GO, RES_PAIR_ON = "res_pair_go", "res_pair_on"  # its button; pressed once this session
RES_REL_PICK, RES_RC_PICK = "res_rel_pick", "res_rc_pick"  # selections on two figures
RES_OPEN_BIN, RES_OPEN_TOP = "res_open_bin", "res_open_top"  # their "Open in Error analysis"
RES_HIST_PICK, RES_OPEN_BAR = "res_hist_pick_", "res_open_bar_"  # a histogram's bar (+ index)
RES_CELL_PICK, RES_OPEN_CELL = "res_cell_pick_", "res_open_cell_"  # a confusion cell (+ index)
RES_ROC_PICK, RES_OPEN_FLAG = "res_roc_pick", "res_open_flag"  # a point of the ROC curve

# ----------------------------------------------------------------- app_pages/errors.py
ERR_T = "err_T"  # samples per example
ERR_N = "err_n"  # examples per domain (0 = all)
ERR_GO = "err_go"  # the Compute button
ERR_REQUEST = "err_request"  # the request last computed
ERR_FRAME = "err_frame"  # (request, per-example frame, skipped): filters and sorts reuse it
ERR_DOMAIN, ERR_VIEW, ERR_SORT = "err_domain", "err_view", "err_sort"  # filters and order
ERR_OPEN = "err_open"  # the row shown below the table
ERR_SLICE_BY, ERR_SLICE_PATTERN = "err_slice_by", "err_slice_pattern"  # the slices' grouping
ERR_SLICE_PICK = "err_slice_pick"  # the slice clicked in the slices' table
ERR_SEL_DONE = "err_sel_done"  # the link's selection whose T and examples were last applied
ERR_SEL_CLEAR = "err_sel_clear"  # the button that drops the selection
MAP_COLOR = "map_color"  # the dataset map's colouring
MAP_PLOT = "map_plot"  # the dataset map's chart (its selection filters the table)

# ----------------------------------------------------------------- app_pages/compare.py
CMP_TEXT, CMP_LABEL, CMP_CKPTS = "cmp_text", "cmp_label", "cmp_ckpts"  # the compared input
CMP_LAYER, CMP_HEAD = "cmp_layer", "cmp_head"  # the attention maps shown
CMP_MAPS = "cmp_maps"  # the maps' grid (a container; CSS class st-key-cmp_maps in app.py)
CMP_TABLE_CSV, CMP_SAMPLES_CSV = "cmp_table_csv", "cmp_samples_csv"  # download buttons

# ----------------------------------------------------------------- app_pages/sweep.py
SW_CKPT, SW_WHICH, SW_GRID = "sw_ckpt", "sw_which", "sw_grid"  # what is swept, over which values
SW_N, SW_T = "sw_n", "sw_T"  # examples per domain, samples per example
SW_N_MINE = "sw_n_mine"  # rows per visitor's file (0 = all)
SW_GO = "sw_go"  # the Run button
SW_REQUEST = "sw_request"  # the request last computed

# ----------------------------------------------------------------- app_pages/learn.py
LEARN_SEED = "learn_seed"  # the page's own seed
L_TAU, L_N, L_TAU1 = "l_tau", "l_n", "l_tau1"  # step 1-3 sliders
L_K, L_SPREAD = "l_k", "l_spread"  # step 4 and 6 sliders
L_EM, L_THETA = "l_em", "l_theta"  # step 5 (EM) sliders
L_LAPLACE_N, L_LAPLACE_PRIOR = "l_laplace_n", "l_laplace_prior"  # step 7 (Laplace)

# ----------------------------------------------------------------- app_pages/upload.py
UPLOADED = "_uploaded"  # the name of the checkpoint just added (for the success note)
UP_ZIP, UP_ZIP_GO = "up_zip", "up_zip_go"  # a zip upload and its button
UP_FILES, UP_NAME, UP_FILES_GO = "up_files", "up_name", "up_files_go"  # loose files
UP_PATH, UP_PATH_GO = "up_path", "up_path_go"  # a server folder
UP_TASK, UP_FAMILY, UP_LAYERS = "up_task", "up_family", "up_layers"  # a Hugging Face folder's
UP_HF, UP_HF_GO = "up_hf", "up_hf_go"  # the operator's Hugging Face folders (UQ_HF_DIR)
DATA_KIND = "data_kind"  # a dataset page's examples: bundled or the visitor's file (prefix)
DATA_FILE, DATA_OOD = "data_file", "data_ood"  # the visitor's files (prefixes; "_" + key: read)
DATA_TEXT, DATA_LABEL, DATA_MAP = "data_text", "data_label", "data_map"  # columns, label map
DATA_KEPT = "_data_kept"  # the visitor's files of this session: slot -> DataFile (every page)
DATA_CHANGE, DATA_FORGET = "data_change", "data_forget"  # a kept file's buttons (prefixes)
DATA_CHANGING = "_data_changing"  # the slots whose uploader is open again to replace a file
UP_KIND = "_up_kind"  # (upload file id, "hf" or "project" or an error) of the zip last peeked at

ALL: frozenset[str] = frozenset(
    v
    for k, v in dict(globals()).items()
    if k.isupper()
    and isinstance(v, str)
    and k not in ("FIGURE_PREFIX", "WORK_CANCEL", "WORK_AGAIN")
) | frozenset(KNOBS)
PREFIXES = (FIGURE_PREFIX, WORK_CANCEL, WORK_AGAIN)  # keys made at run time: prefix + a name
