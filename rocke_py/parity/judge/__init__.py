"""One gate run and its verdicts: the status set, known gaps, golden.json, the last run."""
