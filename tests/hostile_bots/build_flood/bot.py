"""Never runs: its build fails."""
