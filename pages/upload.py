"""Your own checkpoint: upload a zip of a checkpoint folder (or its files), or give a folder path
on the server; once validated it is in the sidebar's picker on every page, for this session."""

from __future__ import annotations

import streamlit as st

from ui import cached, sidebar
from ui import keys as K
from ui.upload import (
    MAX_UPLOAD_BYTES,
    SERVER_PATHS_ENV,
    UploadError,
    files_from_zip,
    from_path,
    install,
    server_paths_allowed,
)

sidebar.page("Your own checkpoint", needs_checkpoint=False)
st.write("A checkpoint is a folder with `config.json`, `model.safetensors` and `vocab.json` "
         "(plus optional `metrics.json` and `README.md`), as `python -m uqlab.train` writes it. "
         "It is checked strictly (every tensor, shape and setting) and never executed; it stays "
         "available on every page until you close this browser tab.")  # fmt: skip
folder = cached.upload_folder()


def _done(name: str) -> None:
    cached.rescan()
    st.session_state[K.UPLOADED] = name
    st.session_state[K.SELECT_CKPT] = name  # the sidebar selects it on the rerun
    st.rerun()


zip_tab, files_tab, path_tab = st.tabs(["Zip of the folder", "Loose files", "Folder on the server"])
with zip_tab:
    up = st.file_uploader(f"Zip (at most {MAX_UPLOAD_BYTES // 2**20} MB)", type=["zip"],
                          key=K.UP_ZIP)  # fmt: skip
    if up is not None and st.button("Validate and add", key=K.UP_ZIP_GO, type="primary"):
        try:
            name = install(files_from_zip(up.getvalue()), up.name.rsplit(".", 1)[0], folder)
            _done(name)
        except UploadError as exc:
            st.error(str(exc), icon="✋")
with files_tab:
    ups = st.file_uploader(
        "config.json, model.safetensors, vocab.json (+ metrics.json, README.md)",
        accept_multiple_files=True,
        key=K.UP_FILES,
    )
    label = st.text_input("Name", "my-checkpoint", key=K.UP_NAME, max_chars=40)
    if ups and st.button("Validate and add", key=K.UP_FILES_GO, type="primary"):
        try:
            total = sum(u.size for u in ups)
            if total > MAX_UPLOAD_BYTES:
                raise UploadError(f"The files have {total / 2**20:.0f} MB together; the limit is "
                                  f"{MAX_UPLOAD_BYTES // 2**20} MB.")  # fmt: skip
            _done(install({u.name: u.getvalue() for u in ups}, label, folder))
        except UploadError as exc:
            st.error(str(exc), icon="✋")
with path_tab:
    if not server_paths_allowed():
        st.info(f"Loading a folder of the server is off on this deployment (anyone with the "
                f"link could otherwise read the server's files). The operator can allow it "
                f"with the environment variable {SERVER_PATHS_ENV}=1.")  # fmt: skip
    else:
        path = st.text_input("Folder path on the server", key=K.UP_PATH,
                             placeholder="/path/to/assets/checkpoints/cola-hsto")  # fmt: skip
        if path and st.button("Validate and add", key=K.UP_PATH_GO, type="primary"):
            try:
                files, name = from_path(path)
                _done(install(files, name, folder))
            except UploadError as exc:
                st.error(str(exc), icon="✋")

if st.session_state.get(K.UPLOADED):
    st.success(f"Added **{st.session_state[K.UPLOADED]}** and selected it in the sidebar: "
               "open any page to use it.", icon="✅")  # fmt: skip
mine = cached.catalog(folder)
if mine:
    st.subheader("Uploaded in this session")
    st.dataframe([{"name": i.name, "family": i.family, "task": i.task,
                   "evaluated": bool(i.metrics)} for i in mine], hide_index=True)  # fmt: skip
