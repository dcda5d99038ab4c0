"""Tests of the package, mirroring its layout."""
