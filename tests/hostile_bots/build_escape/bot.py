raise SystemExit("this bot is only built, never played")
