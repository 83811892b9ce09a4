/**
 * The layer's texts in Vietnamese (the default language). `errors` holds the contract's messages exactly as the
 * routes send them in `statusMessage` (the server takes them from here), plus the few the client makes itself;
 * `{name}` marks a value filled in when the text is shown.
 */
export const vi = {
  login: {
    title: 'Đăng nhập',
    lead: 'Dùng tài khoản của hệ thống định danh (IAM).',
    username: 'Tên đăng nhập',
    password: 'Mật khẩu',
    client: 'Ứng dụng',
    useOtp: 'Đăng nhập với mã OTP',
    otpMethod: 'Phương thức OTP',
    authenticator: 'Ứng dụng xác thực',
    messenger: 'Tin nhắn',
    otp: 'Mã OTP',
    sendOtp: 'Gửi mã',
    sendingOtp: 'Đang gửi…',
    submit: 'Đăng nhập',
    sso: 'Đăng nhập bằng SSO',
    ssoLead: 'Đăng nhập bằng tài khoản của nhà cung cấp định danh (SSO).',
    submitting: 'Đang đăng nhập…',
    loading: 'Trang đang tải, vui lòng chờ giây lát.',
    usernameRequired: 'Vui lòng nhập tên đăng nhập.',
    passwordRequired: 'Vui lòng nhập mật khẩu.',
    otpRequired: 'Vui lòng nhập mã OTP.',
    otpSent: 'Đã gửi mã OTP qua tin nhắn. Vui lòng nhập mã bạn nhận được.',
  },
  errorPage: {
    forbiddenTitle: 'Không có quyền truy cập',
    notFoundTitle: 'Không tìm thấy trang',
    otherTitle: 'Đã có lỗi xảy ra',
    notFound: 'Trang bạn tìm không tồn tại hoặc đã được chuyển đi.',
    retryLater: 'Vui lòng thử lại sau ít phút.',
    home: 'Về trang chủ',
  },
  logout: {
    title: 'Đăng xuất',
    question: 'Bạn có muốn đăng xuất?',
    confirm: 'Đăng xuất',
    stay: 'Ở lại',
  },
  errors: {
    missingCredentials: 'Thiếu tên đăng nhập hoặc mật khẩu.',
    otpNotConfigured: 'Chưa cấu hình gửi OTP (auth.endpoints.otpSend).',
    baseUrlMissing: 'auth.baseURL chưa cấu hình (APP_AUTH_BASE_URL).',
    tokenMissing: 'IAM không trả accessToken (kiểm tra auth.mapping.token).',
    proxyTargetMissing: 'apiProxyTarget chưa cấu hình.',
    cookieTooLarge: 'Phiên đăng nhập vượt quá giới hạn 4 KB của cookie.',
    bodyTooLarge: 'Dữ liệu gửi lên quá lớn.',
    iamUnreachable: 'Không kết nối được IAM.',
    iamTimeout: 'IAM không phản hồi sau {seconds} giây.',
    iamInvalid: 'IAM trả dữ liệu không hợp lệ.',
    iamTooLarge: 'IAM trả dữ liệu quá lớn (tối đa 1 MiB).',
    iamTooManyEntries: 'IAM trả quá nhiều vai trò hoặc quyền (tối đa 10.000).',
    tooManyAttempts: 'Bạn đã thử quá nhiều lần. Vui lòng thử lại sau {seconds} giây.',
    apiPathInvalid: 'Đường dẫn API không hợp lệ.',
    requestTargetInvalid: 'Đường dẫn yêu cầu không hợp lệ.',
    apiUnreachable: 'Không kết nối được máy chủ API.',
    apiTimeout: 'Máy chủ API không phản hồi.',
    internal: 'Lỗi máy chủ nội bộ.',
    crossOrigin: 'Yêu cầu khác nguồn gốc bị từ chối.',
    methodNotAllowed: 'Phương thức không được hỗ trợ.',
    notJson: 'Dữ liệu gửi lên phải ở dạng JSON.',
    notForm: 'Dữ liệu gửi lên phải ở dạng application/x-www-form-urlencoded.',
    bodyTimeout: 'Hết thời gian chờ dữ liệu gửi lên.',
    webSocketNotFound: 'Không có WebSocket ở đường dẫn này.',
    tooManyTunnels: 'Quá nhiều kết nối WebSocket đang mở.',
    upgradeUnsupported: 'Chỉ hỗ trợ nâng cấp kết nối lên WebSocket (GET).',
    shuttingDown: 'Máy chủ đang dừng.',
    verifyQueryInvalid: 'Tham số kiểm tra quyền không hợp lệ (chỉ nhận permission và any).',
    verifyNoSession: 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.',
    verifyForbidden: 'Bạn không có quyền truy cập.',
    ssoUnavailable: 'Chưa kết nối được nhà cung cấp định danh (OpenID Provider).',
    ssoNotConfigured: 'Đăng nhập SSO chưa được bật (APP_AUTH_KIND=oidc).',
    tokenStoreUnavailable: 'Không đọc được kho token của phiên đăng nhập (Redis). Vui lòng thử lại sau giây lát.',
    useSso: 'Hệ thống đăng nhập bằng SSO: hãy dùng nút "Đăng nhập bằng SSO".',
    ssoDenied: 'Đăng nhập SSO đã bị từ chối tại nhà cung cấp định danh.',
    ssoExpired: 'Lượt đăng nhập SSO đã hết hạn hoặc không hợp lệ. Vui lòng đăng nhập lại.',
    ssoFailed: 'Đăng nhập SSO không thành công. Vui lòng thử lại.',
    logoutTokenInvalid: 'Logout token không hợp lệ.',
    // Made by the client, not sent by a route.
    forbiddenPage: 'Bạn không có quyền truy cập trang này.',
    network: 'Không kết nối được máy chủ. Vui lòng kiểm tra mạng và thử lại.',
    httpStatus: 'Lỗi máy chủ (HTTP {status}).',
  },
}

/** Every text the layer's pages show, by section and key. */
export type AuthMessages = { readonly [S in keyof typeof vi]: { readonly [K in keyof typeof vi[S]]: string } }

/** Which of the contract's (and the client's) errors a message is. */
export type ErrorKey = keyof typeof vi.errors
