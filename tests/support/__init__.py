"""What several test modules share: paths, the workflow runner, configs, records, constructed claims."""
