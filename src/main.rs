fn main() -> std::process::ExitCode {
    lineage::cli::run()
}
