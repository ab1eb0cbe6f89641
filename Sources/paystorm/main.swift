import PayStormCLI

PayStormCLI.main()
