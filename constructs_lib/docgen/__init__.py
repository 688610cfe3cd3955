"""Documentation writers: Markdown + Mermaid, NoSQL Workbench export, docs for a cloud assembly.

They read the model and the runtime, run at synth time and from ``python -m constructs_lib``, and are
never bundled into a Lambda function.
"""
