from mirror.cli.app import main

main()
