"""The AWS CDK constructs (need the ``cdk`` extra). Import them from :mod:`constructs_lib`."""
