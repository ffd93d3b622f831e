"""Your own checkpoint: upload a zip of a checkpoint folder or of a Hugging Face classifier folder
(or their files), pick one of the operator's Hugging Face folders, or give a folder path on the
server; once validated it is in the sidebar's picker on every page, for this session."""

from __future__ import annotations

import streamlit as st

from ui import cached, sidebar
from ui.logic import keys as K
from ui.logic.format import plain
from ui.logic.inputs import upload_mb
from uqcore.families import TRAINING_FREE, get_family
from uqcore.families import title as family_title
from uqlab.catalog.tasks import TASKS, task_title
from uqlab.models.intake import (
    HF_DIR_ENV,
    MAX_UPLOAD_BYTES,
    SERVER_PATHS_ENV,
    UploadError,
    dropped_note,
    files_from_zip,
    from_path,
    guess_task,
    hf_folders,
    install,
    install_hf_folder,
    is_hf,
    server_paths_allowed,
)

OWN_TASK = ""  # the task selectbox's last option: the visitor's own task file
sidebar.page("Your own checkpoint", needs_checkpoint=False)
st.write(
    "Two kinds of folder are read. **This project's checkpoints**: `config.json`, "
    "`model.safetensors` and `vocab.json` (plus optional `metrics.json` and `README.md`), "
    "as this project's training (uqlab.train) writes them. **A Hugging Face classifier**: "
    "`config.json` (with `id2label`), `model.safetensors` and `tokenizer.json` of a "
    "BertForSequenceClassification (BERT, MiniLM, TinyBERT...), "
    "RobertaForSequenceClassification or DistilBertForSequenceClassification, or a decoder: "
    "LlamaForSequenceClassification (SmolLM...), Qwen2ForSequenceClassification, "
    "MistralForSequenceClassification or GPT2ForSequenceClassification; you pick how "
    "to make it stochastic, no training needed. Everything is checked strictly (every "
    "tensor, shape and setting) and never executed; pickles are refused. It stays "
    "available on every page until you close this browser tab."
)
folder = cached.upload_folder()


def _done(name: str) -> None:
    cached.rescan()
    st.session_state[K.UPLOADED] = name
    st.session_state[K.SELECT_CKPT] = name  # the sidebar selects it on the rerun
    st.rerun()


def hf_options(where: str, config: bytes | None = None, own: bool = False) -> dict:
    """The task, family and noisy layers for a Hugging Face folder (widgets keyed by ``where``);
    the task whose labels its ``config`` names is chosen first."""
    c1, c2 = st.columns([3, 2])
    guess = guess_task(config) if config else None
    tasks = (*TASKS, OWN_TASK) if own else tuple(TASKS)  # own: the visitor's task file
    task = c1.selectbox(
        "Its task (the labels, in order, and the data its pages use)",
        tasks,
        index=tasks.index(guess) if guess in tasks else 0,
        format_func=lambda t: "My own: a task file" if t == OWN_TASK else task_title(t),
        key=f"{K.UP_TASK}_{where}",
    )
    task_doc = None
    if task == OWN_TASK:
        up = c1.file_uploader(
            "Its task file (JSON: name, label_names, metric)",
            type=["json"],
            key=f"{K.UP_TASK}_{where}_file",
            max_upload_size=1,
            help="As the lab's task files (uqlab.catalog.task_file). Files it names are ignored: "
            "an upload never points the server at a file; its pages use your labelled file.",
        )
        task_doc = up.getvalue() if up is not None else b""
    family = st.radio(
        "Make it stochastic with (no training)",
        TRAINING_FREE,
        index=TRAINING_FREE.index("mcdropout"),
        format_func=lambda f: f"{family_title(f)}: {get_family(f).untrained_help}",
        key=f"{K.UP_FAMILY}_{where}",
    )
    layers = c2.radio(
        "Noise in",
        ("last", "all"),
        horizontal=True,
        format_func={"last": "the last layer", "all": "every layer"}.get,
        disabled=not get_family(family).layered,
        key=f"{K.UP_LAYERS}_{where}",
        help="Which layers' attention draws noise (STO, BAM); MC dropout drops "
        "at every dropout site of the model.",
    )
    st.caption(
        "Class i of the model is read as label i of the task: check that its id2label "
        "order matches (CoLA: unacceptable, acceptable; IMDB and CR: negative, positive)."
    )
    if task == OWN_TASK:
        return {"task_doc": task_doc, "family": family, "layers": layers}
    return {"task": task, "family": family, "layers": layers}


def _zip_kind(up) -> tuple[str, bytes | None]:
    """``("hf", its config.json)``, ``("project", None)`` or ``(why it cannot be read, None)``,
    peeked once per uploaded file."""
    seen = st.session_state.get(K.UP_KIND)
    if seen and seen[0] == up.file_id:
        return seen[1]
    try:
        files = files_from_zip(up.getvalue())
        kind = ("hf", files["config.json"]) if is_hf(files) else ("project", None)
    except UploadError as exc:
        kind = (str(exc), None)
    st.session_state[K.UP_KIND] = (up.file_id, kind)
    return kind


zip_tab, files_tab, hf_tab, path_tab = st.tabs(
    ["Zip of the folder", "Loose files", "Hugging Face folders here", "Folder on the server"]
)
with zip_tab:
    up = st.file_uploader(
        f"Zip (at most {upload_mb(MAX_UPLOAD_BYTES)} MB)",
        type=["zip"],
        key=K.UP_ZIP,
        max_upload_size=upload_mb(MAX_UPLOAD_BYTES),
    )
    opts = {}
    kind, config = _zip_kind(up) if up is not None else (None, None)
    if kind == "hf":
        st.info(
            "A Hugging Face classifier folder: pick its task and how to sample it.",
            icon=":material/model_training:",
        )
        opts = hf_options("zip", config, own=True)
    if up is not None and st.button("Validate and add", key=K.UP_ZIP_GO, type="primary"):
        try:
            stem = up.name.rsplit(".", 1)[0]
            _done(install(files_from_zip(up.getvalue()), stem, folder, **opts))
        except UploadError as exc:
            st.error(plain(exc), icon="✋")
with files_tab:
    ups = st.file_uploader(
        "config.json, model.safetensors, vocab.json (+ metrics.json, README.md), or a Hugging "
        "Face folder's config.json, model.safetensors, tokenizer.json "
        f"(at most {upload_mb(MAX_UPLOAD_BYTES)} MB together)",
        accept_multiple_files=True,
        key=K.UP_FILES,
        max_upload_size=upload_mb(MAX_UPLOAD_BYTES),
    )
    label = st.text_input("Name", "my-checkpoint", key=K.UP_NAME, max_chars=40)
    config_up = next((u for u in ups or [] if u.name == "config.json"), None)
    loose = (
        hf_options("files", config_up.getvalue(), own=True)
        if config_up is not None and is_hf({"config.json": config_up.getvalue()})
        else {}
    )
    if ups and st.button("Validate and add", key=K.UP_FILES_GO, type="primary"):
        try:
            total = sum(u.size for u in ups)
            if total > MAX_UPLOAD_BYTES:
                raise UploadError(
                    f"The files have {total / 2**20:.0f} MB together; the limit is "
                    f"{upload_mb(MAX_UPLOAD_BYTES)} MB."
                )
            _done(install({u.name: u.getvalue() for u in ups}, label, folder, **loose))
        except UploadError as exc:
            st.error(plain(exc), icon="✋")
with hf_tab:
    offered = hf_folders()
    if not offered:
        st.info(
            f"The operator of this server offers no Hugging Face folders. To offer some, "
            f"set the environment variable {HF_DIR_ENV} to a folder of classifier folders "
            "(each as save_pretrained writes it) before starting the app."
        )
    else:
        pick = st.selectbox("Model folder", list(offered), key=K.UP_HF)
        opts = hf_options("server", (offered[pick] / "config.json").read_bytes())
        if st.button("Import and add", key=K.UP_HF_GO, type="primary"):
            try:
                name = f"{pick}-{opts['family']}"
                with st.spinner("Checking and importing the model…"):
                    _done(install_hf_folder(offered[pick], name, folder, **opts))
            except UploadError as exc:
                st.error(plain(exc), icon="✋")
with path_tab:
    if not server_paths_allowed():
        st.info(
            f"Loading a folder of the server is off on this deployment (anyone with the "
            f"link could otherwise read the server's files). The operator can allow it "
            f"with the environment variable {SERVER_PATHS_ENV}=1."
        )
    else:
        path = st.text_input(
            "Folder path on the server",
            key=K.UP_PATH,
            placeholder="/path/to/assets/checkpoints/cola-hsto",
        )
        with st.expander("If it is a Hugging Face classifier folder"):
            path_opts = hf_options("path")
        if path and st.button("Validate and add", key=K.UP_PATH_GO, type="primary"):
            try:
                files, name = from_path(path)
                _done(install(files, name, folder, **(path_opts if is_hf(files) else {})))
            except UploadError as exc:
                st.error(plain(exc), icon="✋")

if st.session_state.get(K.UPLOADED):
    added = st.session_state[K.UPLOADED]
    st.success(
        f"Added **{plain(added)}** and selected it in the sidebar: open any page to use it.",
        icon=":material/check_circle:",
    )
    got = cached.info_of(added, folder)
    note = dropped_note(got.training) if got is not None else None
    if note:
        st.info(plain(note), icon=":material/info:")
mine = cached.catalog(folder)
if mine:
    st.subheader("Uploaded in this session")
    st.dataframe(
        [
            {"name": i.name, "family": i.family, "task": i.task, "evaluated": bool(i.metrics)}
            for i in mine
        ],
        hide_index=True,
    )
