import KeystoreCLI

KeystoreTool.main()
