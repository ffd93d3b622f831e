"""Tests of the app: AppTests of app_pages/ and tests of ui/ (tests/app/logic: ui/logic/,
tests/app/viz: viz/)."""
