import Foundation

/// The benchmark's two outputs: a markdown table for people and the JSON contract for tools.
enum Report {
    static func markdown(_ results: [ScenarioResult]) -> String {
        var lines = ["| scenario | unit | contender | result |", "| --- | --- | --- | ---: |"]
        for result in results {
            for (name, value) in result.results.sorted(by: { $0.value > $1.value }) {
                lines.append(
                    "| \(result.name) | \(result.unit) | \(name) | \(String(format: value < 100 ? "%.1f" : "%.0f", value)) |"
                )
            }
        }
        lines.append("")
        for result in results { lines.append("- \(result.name): \(result.notes)") }
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [ScenarioResult]) throws -> Data {
        let scenarios: [[String: Any]] = results.map { result in
            [
                "name": result.name, "unit": result.unit, "higher_is_better": result.higherIsBetter,
                "results": result.results, "metrics": result.metrics, "notes": result.notes,
            ]
        }
        return try JSONSerialization.data(
            withJSONObject: ["scenarios": scenarios],
            options: [.prettyPrinted, .sortedKeys]
        )
    }
}
