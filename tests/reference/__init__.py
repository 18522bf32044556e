"""Independent rules references for the differential tests.

The package has one implementation of each solitaire's rules, the compiled kernel; the
classes here are a second one, written apart from it in plain Python from the rule text
(they were the package's rules before the kernels took over), so that a test can play the
same games through both and a slip in either shows. Nothing in the package imports them.
"""
