"""The components as a Pulumi component package, for programs in any Pulumi language.

`schema` generates the package schema from the components' Args and docstrings (`fields` reads them);
`provider` serves it and constructs the components when the engine asks (`python -m elastic_gpu.package`,
which the plugin in provider/ runs).
"""
