"""Tasks and their data: the task table and task description files, labelled table
files, each task's example sentences, and the repository's folders."""
