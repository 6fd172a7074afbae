import ArgumentParser

struct Hello: ParsableCommand {
    @Option(help: "Whom to greet.")
    var name = "world"

    func run() {
        print("hello \(name)")
    }
}

Hello.main()
