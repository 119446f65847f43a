"""Tests of the engine, the command line and the notebooks."""
