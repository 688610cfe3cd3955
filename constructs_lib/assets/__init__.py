"""Building the asset directory of a generated Lambda function, without the AWS CDK.

:mod:`.bundling` stages the asset (the bundled ``model``/``runtime`` modules, ``model.json``, the
user's code from :mod:`.handler_code`, the wheels :mod:`.requirements` installs), :mod:`.slim` and
:mod:`.bytecode` make it small and fast to load. The constructs call these; nothing here imports
``aws_cdk``. See docs/adr/0048-asset-building-is-its-own-package.md.
"""
