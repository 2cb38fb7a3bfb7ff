import HTTPTypes
import Testing

@testable import Courier

@Suite("The upload protocol's structured-field values, as the client and the test server read them")
struct StructuredFieldValueTests {
    @Test func aBooleanIsQuestionMarkOneOrZero() {
        #expect(StructuredFieldValue.boolean("?1") == true)
        #expect(StructuredFieldValue.boolean(" ?0\t") == false)
        for text in ["?2", "1", "true", "", "? 1", nil] as [String?] {
            #expect(StructuredFieldValue.boolean(text) == nil, "\(String(describing: text))")
        }
    }

    @Test func anIntegerIsUpToFifteenDigitsWithoutASign() {
        #expect(StructuredFieldValue.integer("0") == 0)
        #expect(StructuredFieldValue.integer(" 123 ") == 123)
        #expect(StructuredFieldValue.integer("999999999999999") == 999_999_999_999_999)
        for text in ["9999999999999999", "99999999999999999999", "-1", "+1", "1.5", "1 2", "", "٣", nil] as [String?] {
            #expect(StructuredFieldValue.integer(text) == nil, "\(String(describing: text))")
        }
    }

    @Test func anAnswerSaysCompleteInEitherDraftsField() {
        var fields = HTTPFields()
        fields[ResumableUploadProtocol.incompleteField] = "?1"
        #expect(ResumableUploadProtocol.isComplete(in: fields) == false)
        fields[ResumableUploadProtocol.completeField] = "?1"
        #expect(ResumableUploadProtocol.isComplete(in: fields) == true)
        fields[ResumableUploadProtocol.offsetField] = "18446744073709551616"
        #expect(ResumableUploadProtocol.offset(in: fields) == nil)
    }
}
