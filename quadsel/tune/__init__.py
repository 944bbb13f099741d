"""`quadsel tune`: the whole loop for every collective the library can force, one command, a folder to deploy.

folder.py is the output folder (where each file goes) and its journal (`tune.json`: what is finished, so a
rerun continues where the last one stopped); deploy.py what each library reads (its rules or tuning file, the
environment variables of `tuned.env`); steps.py the steps of one collective (measure through the self-launching
`quadsel measure`, build the default tree) and of the deployment (write the files, verify them with the follow
proof, prune what verify found slower); verdict.py which collectives are worth deploying; report.py
`report.md` and the last line; run.py the loop over the collectives with the time budget and the progress.
docs/tune.md.
"""
