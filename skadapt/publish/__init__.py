"""Publishing to the Hugging Face Hub: model cards, licenses, upload.

- :mod:`skadapt.publish.target`   what a path holds: a run directory (its final model) or a model directory,
  and the reports beside it, read through the stage list
- :mod:`skadapt.publish.card`     the model card: sentence-transformers' own card + skadapt's metadata, and
  each stage's own section (``Stage.card``) in run order
- :mod:`skadapt.publish.sections` the card sections no one stage owns (usage, Hub data, licenses, limits)
- :mod:`skadapt.publish.licenses` base model and training data licenses, non-commercial / share-alike flags
- :mod:`skadapt.publish.model`    ``skadapt publish``: assemble the upload folder, dry run or upload
- :mod:`skadapt.publish.dataset`  ``skadapt publish-dataset``: a synthetic STS dataset with its card
- :mod:`skadapt.publish.upload`   token, ``create_repo`` + ``upload_folder``, one message per Hub failure
- :mod:`skadapt.publish.stage`    the recipe's ``publish`` stage
- :mod:`skadapt.publish.errors`   one error class per way publishing fails
"""
