"""The `mind` command: click commands that parse, call the floor (`mindledger`) and print."""
